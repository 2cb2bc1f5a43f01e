"""Build hook: everything else is in pyproject.toml.

corpus/ is installed as the package ``syllabot.corpus`` for its data; the dev-only generator
``corpus/make_syllabi.py`` stays in the repository and out of the wheel (setuptools' exclude-package-data
filters data files, not modules, hence this hook).
"""

from setuptools import setup
from setuptools.command.build_py import build_py

DEV_ONLY_MODULES = {("syllabot.corpus", "make_syllabi")}


class BuildPy(build_py):
    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if (m[0], m[1]) not in DEV_ONLY_MODULES]


setup(cmdclass={"build_py": BuildPy})
