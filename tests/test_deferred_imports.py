"""shared/deferred_imports.py: PyJWT (and cryptography's bindings) stay out of a worker until used."""

from __future__ import annotations

import json
import subprocess
import sys

from syllabot.shared.deferred_imports import _Deferred, defer


def _run(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_worker_starts_without_jwt_and_jwt_loads_when_used() -> None:
    seen = _run(
        "import json, sys\n"
        "import syllabot.worker.main, syllabot.bots.frontend, syllabot.cli\n"
        "before = {'stand_in': type(sys.modules['jwt']).__name__,"
        " 'bindings': 'cryptography.hazmat.bindings._rust' in sys.modules}\n"
        "import jwt\n"
        "from redis.auth.token import JWToken\n"
        "token = jwt.encode({'exp': 2000000000}, 'k' * 32, algorithm='HS256')\n"
        "print(json.dumps({**before, 'expires': JWToken(token).get_expires_at_ms(),"
        " 'after': type(sys.modules['jwt']).__name__, 'decoded': jwt.decode(token, 'k' * 32, algorithms=['HS256'])}))"
    )
    assert seen["stand_in"] == "_Deferred" and not seen["bindings"]
    assert seen["expires"] == 2_000_000_000_000.0 and seen["decoded"] == {"exp": 2000000000}
    assert seen["after"] == "module"  # the real module took its name back


def test_a_submodule_import_loads_the_real_package() -> None:
    seen = _run(
        "import json, sys\n"
        "import syllabot\n"
        "import jwt.exceptions\n"
        "print(json.dumps({'module': type(sys.modules['jwt']).__name__,"
        " 'error': jwt.exceptions.DecodeError.__name__}))"
    )
    assert seen == {"module": "module", "error": "DecodeError"}


def test_defer_leaves_imported_and_missing_modules_alone() -> None:
    assert defer("json") is False  # already imported: never replaced
    assert defer("no_such_module_for_syllabot") is False
    assert "no_such_module_for_syllabot" not in sys.modules
    assert not isinstance(sys.modules["json"], _Deferred)
