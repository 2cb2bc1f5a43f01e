"""The course card: a course's facts read once, at index time, into typed slots, each with its page.

Why: students ask mostly about the course itself (who teaches, when and where, office hours,
grading, dates, the rules), and those facts sit in header blocks, "Label: value" lines and single
sentences that a passage's embedding dilutes: "prof office hrs??" found a page about software. A
fact read into a typed slot is a signal retrieval cannot give: the office-hours slot filled with a
day and a time, cited, answers "office hrs?" with confidence; the phone slot empty after the
syllabus was read is an honest "Not in your materials".

One general mechanism, no code per slot or per course: :data:`SLOTS` is one table of short
descriptions, the labels and sentence cues that state each slot, the value type that checks it and
the words of a question that ask it. The reader (:func:`read_card`, pure) takes a collection's
chunks, reads

* **labelled lines** ("Office Hours: MWF 11:30", a header block's "When / Where / Who", one
  person's fields after their name, on lines of their own or one line parted by "; ", until the
  next name or prose; the passages' overlap read once, so a block cut between passages keeps its
  owner): the label names the slot, the value is checked by type (an email holds "@", a meeting
  time a day or a time, a room is never a year);
* **sentences** ("Late submissions will not be graded."): a sentence whose words state a slot,
  checked by the same value types, kept whole with its page;

and each document's term ("Fall 2018"), so that where a collection holds two terms of one course
the older term's facts are marked ``older`` and never answer for the current one.

At question time :func:`answer_from_card` picks the facts of the asked slot (``Question.slots``,
read once with the rest of the question) for the person or role named, best first; a slot no fact
fills, in a course whose card holds the basics of a syllabus, is reported empty with the closest
fact the card does hold. The verdict (``worker.answerers.decision.decide``) weighs that as evidence.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from syllabot.shared.wording import clip
from syllabot.worker.ingest.chunking import field_key
from syllabot.worker.query.values import values_in
from syllabot.worker.text.currency import term_of, term_order
from syllabot.worker.text.documents import Chunk
from syllabot.worker.text.sentences import split_sentences
from syllabot.worker.text.terms import term_set
from syllabot.worker.text.value_shapes import MONTHS, PERCENT, WEEKDAYS, YEAR
from syllabot.worker.text.vocabulary import common

_I = re.IGNORECASE


@dataclass(frozen=True)
class Slot:
    """One kind of course fact: what it is (``says``, the words of the teacher's card and of the
    "not listed" note), the labels and sentence cues that state it, the value type a stated value
    must have (:data:`VALUE_TYPES`), the question words that ask it, and its group (the closest
    fact of an empty slot comes from the same group)."""

    name: str
    says: str
    value: str
    asks: re.Pattern[str]
    labels: re.Pattern[str] | None = None
    cues: re.Pattern[str] | None = None
    group: str = ""
    #: questions that ask it, in plain words: a question its ``asks`` words miss is read by meaning
    #: against these (:func:`slot_by_meaning`)
    examples: tuple[str, ...] = ()


def _p(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _I)


#: Where a course keeps its pages (a course website is one of these, or a URL).
_SITES = r"canvas|github|moodle|blackboard|brightspace|sakai|d2l|google\s+classroom|gradescope"
#: Tools a course has students use: a sentence that has them install, run or know one names its software.
_TOOLS = (
    r"python|matlab|julia|stata|spss|sas|jupyter|rstudio|r|excel|gradescope|latex|overleaf|git|github"
    r"|numpy|scipy|pandas|scikit-learn|tensorflow|pytorch|arcgis|qgis|autocad|rhino|grasshopper"
)

_PLATFORMS = (
    r"slack|piazza|ed\s+discussion|edstem|campuswire|discord|microsoft\s+teams|zulip|moodle"
    r"|canvas\s+discussions?|github\s+discussions|gitter|mattermost|ed\s+stem"
)

#: The slots, in the order a label is tried against them (office hours before office, an email
#: before a contact). Every slot a student asks about the course itself; policies are sentences.
SLOTS: tuple[Slot, ...] = (
    Slot(
        "staff.office_hours",
        "office hours",
        "hours",
        _p(
            r"\boffice\s+hours?\b|\bOH\b|\bstudent\s+hours\b|\bmeet\s+(?:with\s+)?(?:the\s+)?(?:instructor|TA)"
        ),
        _p(r"^(?:office|student|consultation|drop-?in)\s+hours?\b|^hours\b|^o\S{0,2}\s*ce\s+hours"),
        _p(r"\b(?:office|student|drop-?in)\s+hours?\b|\bo\s?ce\s+hours\b"),
        "staff",
        examples=(
            "when are office hours",
            "what are the instructor's office hours",
            "when can I meet the TA",
            "when can I drop by to ask the professor questions",
            "does the TA hold help sessions",
            "what times is the prof available to meet",
        ),
    ),
    Slot(
        "staff.email",
        "email address",
        "email",
        _p(r"\be-?mails?\b|\bcontact\b|\breach\s+(?:the|him|her|them|out)\b"),
        _p(r"^e-?mail\b|^contact\b"),
        _p(r"\be-?mail\b"),
        "staff",
        examples=(
            "what is the professor's email",
            "how do I contact the instructor",
            "email address of the TA",
            "how can I get in touch with the teacher",
            "what's the best way to message the prof",
        ),
    ),
    Slot(
        "staff.phone",
        "phone number",
        "phone",
        _p(r"\bphone\b|\bcall\b|\btelephone\b|\bcell\b|\bnumber\s+to\s+(?:call|text)\b"),
        _p(r"^(?:tele)?phone\b|^tel\b|^cell\b"),
        None,
        "staff",
        examples=(
            "what is the instructor's phone number",
            "can I call the professor",
            "is there a number I can text the TA",
        ),
    ),
    Slot(
        "staff.office",
        "office location",
        "place",
        _p(r"\boffice\b(?!\s+hours?)|\bwhere\s+(?:can\s+i\s+)?find\s+(?:the\s+)?(?:instructor|TA)"),
        _p(r"^(?:office|o\S{0,2}\s*ce)(?:\s+(?:location|room|address|number))?$"),
        _p(r"\boffice\s+(?:is\s+(?:in|at)|location|room)\b|\bmy\s+office\b"),
        "staff",
        examples=(
            "where is the professor's office",
            "which room is the instructor's office in",
            "where do I find the TA's office",
            "what building is the prof's office",
        ),
    ),
    Slot(
        "staff.ta",
        "teaching assistant",
        "person",
        _p(r"\bTAs?\b|\bteaching\s+assistants?\b|\bteaching\s+fellows?\b|\btutors?\b|\bgraders?\b"),
        _p(
            r"^(?:teaching\s+assistants?|TAs?|teaching\s+fellows?|TFs?|tutors?|graders?|course\s+assistants?)\b"
        ),
        None,
        "staff",
        examples=(
            "who are the teaching assistants",
            "who is the TA for this class",
            "does this course have a TA",
            "who helps grade the assignments",
        ),
    ),
    Slot(
        "staff.instructor",
        "instructor",
        "person",
        _p(
            r"\bwho\b.{0,30}\b(?:teach|teaching|runs|taught|instructor|professor|lecturer|teacher)"
            r"|\b(?:instructor|professor|lecturer|teacher)(?:'s)?\s+name\b|\bname\s+of\s+(?:the\s+)?(?:instructor|professor|lecturer|teacher)"
        ),
        _p(
            r"^(?:instructors?|professors?|lecturers?|teachers?|who|taught\s+by|faculty|course\s+instructor)\s*$"
        ),
        None,
        "staff",
        examples=(
            "who teaches this course",
            "who is the professor",
            "what is the instructor's name",
            "who is the lecturer for this class",
            "who runs this course",
        ),
    ),
    Slot(
        "meeting.time",
        "meeting time",
        "when",
        _p(
            r"\bwhen\s+(?:does|do|is|are)\s+(?:the\s+|this\s+|our\s+)?(?:class|course|lectures?|labs?|sections?|tutorials?)"
            r"(?:\s+(?:meet|held|happen|start|on))?\s*\??$|\bwhen\s+do\s+we\s+(?:meet|have\s+(?:class|lecture))"
            r"|\bwhat\s+(?:time|days?)\b.*\b(?:class|lecture|meet|lab|section|tutorial)|\b(?:class|lecture|meeting)\s+(?:times?|days?|schedule)\b"
            r"|\b(?:class|course|lecture|it)\s+meets?\b|\bwhat\s+days?\b.*\bmeet"
        ),
        _p(
            r"^(?:when|meeting\s+times?|class\s+times?|lecture\s+times?|lectures?|class(?:es)?|time|times|days?"
            r"|schedule|meets|lab(?:s|\s+sections?)?|sections?|tutorials?(?:\s+\d+)?|recitations?|discussion\s+sections?|x-?hours?)\s*$"
        ),
        _p(
            r"\b(?:class|course|lectures?)\s+(?:meets?|will\s+meet|is\s+held|are\s+held)\b|\bwe\s+(?:will\s+)?meet\b"
        ),
        "meeting",
        examples=(
            "when does the class meet",
            "what days and times are lectures",
            "what time is lecture",
            "what's the class schedule each week",
            "which days do we have class",
            "what time does the lab section start",
        ),
    ),
    Slot(
        "meeting.place",
        "meeting place",
        "place",
        _p(
            r"\bwhere\s+(?:does|do|is|are)\s+(?:the\s+|this\s+|our\s+)?(?:class|course|lectures?|labs?|sections?|tutorials?)\b"
            r"|\bwhere\s+(?:do|will)\s+we\s+meet\b|\b(?:which|what)\s+(?:room|building|classroom|hall)\b|\bclassroom\b"
            r"|\blocation\s+of\s+(?:the\s+)?(?:class|lecture)|\b(?:online|in\s+person)\b.*\b(?:class|lecture)|\b(?:class|lecture)\w*\b.*\b(?:online|in\s+person)\b"
        ),
        _p(
            r"^(?:where|location|classroom|room|place|venue|lecture\s+(?:room|hall)|class\s+location|building|lectures?"
            r"|class(?:es)?|labs?|sections?|tutorials?(?:\s+\d+)?|recitations?|meeting\s+(?:place|location))s?\s*$"
        ),
        _p(
            r"\b(?:class|course|lectures?)\s+(?:will\s+(?:be\s+)?)?(?:held|meets?)\s+(?:in|at|on|via|online)\b"
        ),
        "meeting",
        examples=(
            "where does the class meet",
            "which room are lectures in",
            "is the class online or in person",
            "what building is lecture in",
            "where is the lab section held",
            "is there a zoom link for lecture",
        ),
    ),
    Slot(
        "course.website",
        "course website",
        "site",
        _p(
            r"\bwebsite\b|\bweb\s*site\b|\bcourse\s+(?:page|site)\b|\bcanvas\s+page\b|\bwhere\s+(?:are|do\s+i\s+find)\s+(?:the\s+)?(?:slides|materials)"
        ),
        _p(
            r"^(?:web|website|course\s+(?:website|page|site)|url|homepage|home\s+page|site|\w+\s+(?:page|site))\s*$"
        ),
        _p(
            r"\b(?:course\s+)?(?:website|web\s+page|webpage)\b"
            rf"|\b(?:posted|provided|available|found|shared|uploaded|appear|published)\b.{{0,40}}\b(?:on|at|via|in|to)\s+(?:the\s+)?(?:course\s+)?(?:{_SITES})\b"
            rf"|\bcourse\s+(?:{_SITES})\s+(?:page|site)\b|\b(?:{_SITES})\s+(?:page|site)\s+(?:for|of)\s+the\s+(?:class|course)\b"
        ),
        "course",
        examples=(
            "where is the course website",
            "is there a canvas page for the class",
            "where are the slides posted",
            "where do I find the course materials online",
            "where do the lecture notes get uploaded",
        ),
    ),
    Slot(
        "course.discussion",
        "discussion forum",
        "platform",
        _p(
            rf"\b(?:{_PLATFORMS})\b|\bforum\b|\bwhere\s+(?:do|can|should)\s+(?:i|we)\s+(?:ask|post)\b|\bgroup\s+chat\b"
        ),
        _p(r"^(?:discussion|forum|q\s*&\s*a|questions)\s*$"),
        _p(rf"\b(?:{_PLATFORMS})\b"),
        "course",
        examples=(
            "where do we ask questions online",
            "is there a slack or piazza for the class",
            "is there a forum for the course",
            "where can I post a question for classmates",
        ),
    ),
    Slot(
        "course.term",
        "term",
        "term",
        _p(r"\bwhich\s+(?:term|semester|quarter)\b|\bwhat\s+(?:term|semester|quarter)\b"),
        _p(r"^(?:term|semester|quarter|session)\s*$"),
        None,
        "course",
        examples=(
            "which semester is this course",
            "what term is this syllabus for",
            "is this the fall or spring version of the class",
            "what year is this course from",
        ),
    ),
    Slot(
        "course.credits",
        "credit hours",
        "credits",
        _p(r"(?<!extra\s)\bcredits?\b(?!\s+card)|\bcredit\s+hours?\b|\bECTS\b|\bunits?\s+(?:is|does)\b"),
        _p(r"^(?:credits?|credit\s+hours?|units|ects(?:\s+credits)?)\s*$"),
        _p(
            r"\bcredit\s+(?:hours?|units?)\b|\b(?:\d+|one|two|three|four|five|six)\s+(?:credits?|ECTS)\b|\bECTS\b"
        ),
        "credits",
        examples=(
            "how many credits is this course",
            "how many credit hours is the class worth",
            "how many ECTS do I get for this",
            "how many units is this class",
        ),
    ),
    Slot(
        "course.recordings",
        "lecture recordings",
        "text",
        _p(r"\brecord(?:ed|ings?)\b|\bre-?watch\b|\bvideos?\s+of\s+(?:the\s+)?(?:lectures?|class(?:es)?)\b"),
        _p(r"^(?:lecture\s+|class\s+)?recordings?\s*$"),
        _p(
            r"\b(?:lectures?|class(?:es)?|sessions?|meetings?)\s+(?:will\s+(?:not\s+)?be\s+|are\s+(?:not\s+)?|is\s+(?:not\s+)?)recorded\b"
            r"|\brecordings?\s+of\s+(?:the\s+|our\s+|each\s+)?(?:lectures?|class(?:es)?|sessions?)\b"
            r"|\brecord(?:ed)?\s+(?:the\s+|all\s+|each\s+)?(?:lectures?|class(?:es)?)\b|\b(?:lecture|class|zoom)\s+recordings?\b"
        ),
        "recordings",
        examples=(
            "are lectures recorded",
            "can I watch the lecture later if I miss it",
            "will the zoom sessions be recorded",
            "where are the class recordings posted",
        ),
    ),
    Slot(
        "course.prerequisites",
        "prerequisites",
        "text",
        _p(
            r"\bpre-?requisites?\b|\bprereqs?\b|\bneed\s+to\s+(?:have\s+)?(?:taken|know)\b|\bbackground\b|\bprior\s+(?:knowledge|experience)\b"
        ),
        _p(r"^(?:pre-?requisites?|prereqs?|requirements|background)\s*$"),
        _p(
            r"\bpre-?requisites?\b|\bprior\s+(?:knowledge|experience|coursework)\b|\bmust\s+have\s+taken\b"
            r"|\bmust\s+be\s+(?:skilled|proficient|familiar|comfortable)\b|\bbackground\s+in\b"
        ),
        "course",
        examples=(
            "what are the prerequisites",
            "what do I need to know before taking this class",
            "do I need any prior courses for this",
            "is calculus required before this course",
            "what background should I have",
        ),
    ),
    Slot(
        "grading.scale",
        "letter-grade cut-offs",
        "scale",
        _p(
            r"\bcut-?offs?\b|\bletter\s+grades?\b|\bgrading\s+scale\b|\b(?:get|need|for)\s+an?\s+[ABCD][+-]?\s|\bcurved\b"
            r"|\bon\s+a\s+curve\b|\b(?:is\s+there|any)\s+(?:a\s+)?curve\b|\bgrading\s+curve\b"
            r"|\bcurve\s+(?:the\s+)?(?:grades?|scores?|class|course|exams?|finals?|midterms?)\b"
        ),
        _p(r"^(?:grading\s+scale|grade\s+scale|letter\s+grades?|scale)\s*$"),
        _p(r"\b(?:letter\s+grades?|grading\s+scale|grade\s+scale)\b|\bA\s*[:(]?\s*9\d"),
        "grading",
        examples=(
            "what percentage do I need for an A",
            "what are the letter grade cutoffs",
            "is the class curved",
            "what score counts as a B",
            "what's the grading scale",
        ),
    ),
    Slot(
        "grading.weight",
        "grading weight",
        "weight",
        _p(
            r"\bworth\b(?!.{0,20}\b(?:cpu|machines?|gpus?)\b)|\bhow\s+much\s+(?:does|do|is|are)\b.*\bcount"
            r"|\b(?:weigh\w*|percent(?:age)?|%)\b.{0,40}\b(?:grade|grading|final|course|mark)"
            r"|\b(?:grade|grading|final\s+mark)\b.{0,40}\b(?:weigh\w*|percent(?:age)?|%)"
            r"|\bgrad(?:e|ing)\s+(?:breakdown|split|distribution|components?)\b|\bhow\s+(?:is|are)\s+(?:the\s+)?(?:grade|grading|course)\w*\s+(?:calculated|determined|graded)\b"
            r"|\bhow\s+(?:is|will)\s+(?:the\s+course|this\s+class|it|we)\s+(?:be\s+)?graded\b|\bcounts?\s+(?:for|toward)\s+(?:the\s+|my\s+|your\s+)?(?:final\s+)?grade"
        ),
        None,
        _p(
            r"\bgrade\b|\bgrading\b|\bworth\b|\bweigh|\bcounts?\s+(?:for|toward)\b|\bof\s+(?:the|your)\s+(?:final\s+)?(?:course\s+)?(?:grade|mark)\b"
        ),
        "grading",
        examples=(
            "how much is the final exam worth",
            "how is the final grade calculated",
            "what percent of the grade is homework",
            "what's the grade breakdown",
            "how much do the quizzes count",
            "does participation count toward the grade",
        ),
    ),
    Slot(
        "dates.exam",
        "exam date",
        "when",
        _p(
            r"\bwhen\b.*\b(?:exams?|midterms?|finals?|quiz(?:zes)?|tests?)\b|\b(?:exam|midterm|final)\s+(?:date|day|time)s?\b"
        ),
        _p(r"^(?:midterm|final|exam)s?(?:\s+exam)?(?:\s+date)?\s*$"),
        _p(r"\b(?:midterm|final\s+exam|exams?|quiz(?:zes)?)\b"),
        "dates",
        examples=(
            "when is the midterm",
            "what is the date of the final exam",
            "are there any exams",
            "is there a midterm in this class",
            "when is the next quiz",
            "what day is the final",
        ),
    ),
    Slot(
        "course.submission",
        "where work is handed in",
        "text",
        _p(
            r"\b(?:where|how)\s+(?:do|can|should|will|to)\s+(?:i|we|you|u)?\s*(?:submit|turn\s+in|hand\s+in|upload)\b"
            r"|\b(?:where|how)\s+(?:does|do|is|are)\s+(?:the\s+|our\s+|my\s+)?\w+\s+(?:get\s+)?(?:submitted|turned\s+in|handed\s+in)\b"
        ),
        _p(r"^(?:submissions?|submitting(?:\s+work)?|how\s+to\s+submit)\s*$"),
        _p(
            rf"\b(?:submit(?:ted)?|turn(?:ed)?\s+in|hand(?:ed)?\s+in|upload(?:ed)?)\b.{{0,60}}\b(?:via|through|on|to|in|at|by)\s+"
            rf"(?:the\s+)?(?:course\s+)?(?:{_SITES}|e-?mail|canvas\s+assignments?|the\s+(?:course\s+)?(?:website|site|portal|drive))\b"
        ),
        "submission",
        examples=(
            "where do we submit assignments",
            "how do I turn in the homework",
            "do we hand in the problem sets on canvas or by email",
            "where do I upload my project",
        ),
    ),
    Slot(
        "dates.due",
        "due date",
        "when",
        _p(
            r"\bwhen\b.*\bdue\b|\bdue\s+(?:date|day)s?\b|\bdeadlines?\b|\bwhen\s+(?:do|should|must)\s+(?:i|we)\s+(?:submit|turn\s+in|hand\s+in)\b"
        ),
        _p(r"^(?:due|deadline|due\s+dates?)\s*$"),
        _p(r"\bdue\b|\bdeadline\b|\bsubmit\w*\s+by\b"),
        "dates",
        examples=(
            "when is the homework due",
            "what is the deadline for the project",
            "what time are assignments due",
            "when do I have to submit the essay",
            "what date is the lab report due",
        ),
    ),
    Slot(
        "policy.late",
        "late-work policy",
        "text",
        _p(
            r"\blate\b|\bpast\s+the\s+deadline\b|\bafter\s+the\s+deadline\b|\bgrace\s+(?:period|days?)\b|\bslip\s+days?\b"
        ),
        _p(r"^late(?:\s+(?:work|submissions?|policy|assignments?|homeworks?|papers?))?\s*$"),
        _p(
            r"\blate\s+(?:work|submissions?|assignments?|homeworks?|papers?|penalt\w*|polic\w*|days?)\b|\b(?:submitted|turned\s+in|handed\s+in|submit\w*)\s+late\b"
            r"|\blate\b.{0,60}\b(?:penal\w*|deduct\w*|accept\w*|graded|credit)\b|\bafter\s+the\s+deadline\b|\bgrace\s+(?:period|days?)\b|\bslip\s+days?\b"
            r"|\bpast\s+(?:the|their|its)\s+due\s+dates?\b|\b(?:submit\w*|turn\w*\s+in|hand\w*\s+in)\s+(?:\w+\s+){0,3}on\s+time\b"
        ),
        "policy",
        examples=(
            "what is the late policy",
            "can I turn in homework late",
            "is there a penalty for late work",
            "what happens if I submit after the deadline",
            "do we get any late days",
        ),
    ),
    Slot(
        "policy.missed",
        "policy on missed work and extensions",
        "text",
        _p(
            r"\bmiss(?:ed|ing)?\b(?!\s+(?:the\s+)?(?:lecture|class)\s+\d|.{0,40}\bwhat\s+(?:was|did|is))|\bmake-?\s?ups?\b|\bextensions?\b|\bsick\b|\bexcused?\b|\babsences?\b|\bcan'?t\s+make\s+it\b|\bemergenc"
        ),
        _p(
            r"^(?:extensions?|make-?up\s+(?:exams?|work|policy)|missed\s+(?:work|exams?|classes?)|absences?)\s*$"
        ),
        _p(
            r"(?<!\.)\bextensions?\b(?!\s*[=(])|\bmake-?\s?ups?\b|\bmiss(?:ed|es)?\s+(?:an?\s+|the\s+)?(?:exam|midterm|final|class|deadline|quiz|lab|assignment)"
            r"|\bexcused\s+(?:from|for)\b|\bmedical\s+(?:emergenc\w*|reasons?|notes?|documentation|excuses?|certificates?|leave|circumstances)\b|\bemergenc"
        ),
        "policy",
        examples=(
            "what if I miss an exam",
            "can I get an extension",
            "what happens if I am sick",
            "is there a makeup exam",
            "I have a family emergency and will miss the deadline",
        ),
    ),
    Slot(
        "policy.extra_credit",
        "extra credit",
        "text",
        _p(r"\bextra\s+credit\b|\bbonus\b|\bextra\s+points?\b"),
        _p(r"^(?:extra\s+credit|bonus(?:\s+points)?)\s*$"),
        _p(
            r"\bextra\s+credit\b|\bbonus\s+(?:points?|credit|marks?|questions?|problems?|assignments?|tasks?)\b"
            r"|\b(?:as|for)\s+(?:a\s+)?bonus\b|\bextra\s+points?\b"
        ),
        "policy",
        examples=(
            "is there extra credit",
            "are there bonus points",
            "can I do anything to raise my grade at the end",
            "are there extra points available",
        ),
    ),
    Slot(
        "policy.attendance",
        "attendance and participation policy",
        "text",
        _p(
            r"\battend\w*\b|\bparticipat\w*\b|\bmandatory\b|\bskip\w*\s+(?:class|lecture)|\bshow\s+up\b|\brequired\s+to\s+come\b"
        ),
        _p(r"^(?:attendance|participation|attendance\s+and\s+participation|class\s+participation)\s*$"),
        _p(
            r"\battendance\b|\battend(?:s|ed|ing)?\s+(?:\w+\s+){0,3}(?:class(?:es)?|lectures?|sessions?|meetings?|sections?|labs?|tutorials?)\b"
            r"|\battend\s+and\b|\b(?:class|course|in-class|active|student)\s+participation\b|\bparticipation\s+(?:in|grade|points|score|is|will|counts?)\b"
            r"|\bparticipat\w*\s+(?:in|during)\s+(?:class|discussions?|lectures?|labs?)\b|\bphysically\s+present\b|\babsences?\b"
            r"|\bshow(?:ing)?\s+up\s+(?:for|to|in)\s+(?:class|lectures?)\b"
        ),
        "policy",
        examples=(
            "is attendance mandatory",
            "does participation count",
            "can I skip class",
            "do we lose points for missing lectures",
            "is attendance taken",
        ),
    ),
    Slot(
        "policy.ai",
        "policy on AI tools",
        "text",
        _p(
            r"\bchat\s?gpt\b|\bA\.?I\.?\b|\bGPT\w*\b|\bcopilot\b|\bLLMs?\b|\blarge\s+language\s+models?\b|\bclaude\b|\bgemini\b"
            r"|\bgenerative\s+(?:A\.?I\.?|models?|tools?|text|writing)\b|\bgen\s+A\.?I\.?\b"
        ),
        _p(r"^(?:a\.?i\.?|generative\s+a\.?i\.?|ai\s+(?:tools?|policy|use)|use\s+of\s+ai)\b"),
        _p(
            r"\bchat\s?gpt\b|\b(?:generative\s+)?A\.?I\.?\b(?!\s*[-=])|\bGPT-?\d?\b|\bcopilot\b|\bLLMs?\b|\blarge\s+language\s+models?\b"
        ),
        "policy",
        examples=(
            "can I use ChatGPT",
            "what is the policy on AI tools",
            "are we allowed to use AI to write code",
            "is using copilot cheating in this class",
        ),
    ),
    Slot(
        "policy.collaboration",
        "collaboration policy",
        "text",
        _p(
            r"\bcollaborat\w*\b|\bwork\s+(?:together|with\s+(?:others|friends|classmates|a\s+partner))\b|\bshare\s+(?:code|answers|solutions)\b|\bin\s+(?:groups?|pairs|teams)\b|\bpartners?\b|\bgroup\s+work\b"
        ),
        _p(r"^(?:collaboration(?:\s+policy)?|group\s+work)\s*$"),
        _p(
            r"\bcollaborat(?:e|es|ed|ing|ion|ions|ors?)\b|\bcollusion\b|\bwork\s+together\b|\bown\s+(?:work|words|code)\b|\bindividually\b"
            r"|\bdiscuss\s+(?:the\s+)?(?:problems|homework|assignments)\b|\b(?:be|is|are)\s+(?:your|their)\s+own\b|\byour\s+own,?\s+(?:\w+\s+)?work\b"
            r"|\bdiscuss\s+(?:it\s+|them\s+)?with\s+(?:other\s+students|classmates|each\s+other|anyone|others)\b"
        ),
        "policy",
        examples=(
            "can I work with friends on the homework",
            "can we work together in groups",
            "is collaboration allowed",
            "can I discuss the problem sets with classmates",
            "do we have to do the homework alone",
        ),
    ),
    Slot(
        "policy.accommodations",
        "accommodations for disabilities",
        "text",
        _p(r"\baccommodat\w*\b|\bdisabilit\w*\b|\baccessib\w*\b|\bextra\s+time\s+on\b"),
        _p(r"^(?:accommodations?|accessibility|disabilit\w*|student\s+needs)\b"),
        _p(r"\baccommodat\w*\b|\bdisabilit\w*\b|\baccessib\w*\b"),
        "policy",
        examples=(
            "how do I get disability accommodations",
            "who do I contact for accommodations",
            "can I get extra time on exams for a disability",
        ),
    ),
    Slot(
        "policy.regrade",
        "regrade policy",
        "text",
        _p(r"\bre-?grad\w*\b|\bdispute\b|\bgrade\s+(?:appeal|complaint)s?\b|\bwrong(?:ly)?\s+graded\b"),
        _p(r"^(?:re-?grad\w*|grade\s+appeals?)\s*$"),
        _p(r"\bre-?grad\w*\b|\bgrade\s+appeals?\b"),
        "policy",
        examples=(
            "how do I ask for a regrade",
            "what if my assignment was graded wrong",
            "how do I dispute a grade",
            "who do I ask if points were added up wrong",
        ),
    ),
    Slot(
        "policy.integrity",
        "academic integrity policy",
        "text",
        _p(
            r"\bplagiari\w*\b|\bcheat(?:s|ed|ing|er)?\b(?!\s+sheets?)|\bacademic\s+(?:integrity|honesty|misconduct)\b|\bhonou?r\s+(?:code|principle)\b|\bcopy\w*\s+(?:code|answers|from)\b"
        ),
        _p(
            r"^(?:academic\s+(?:integrity|honesty|misconduct)|(?:the\s+)?(?:academic\s+)?honou?r\s+(?:code|principle)|plagiarism)\b"
        ),
        _p(
            r"\bplagiari\w*\b|\bcheat\w*\b|\bacademic\s+(?:integrity|honesty|misconduct|dishonesty)\b|\bhonou?r\s+(?:code|principle)\b"
        ),
        "policy",
        examples=(
            "what is the plagiarism policy",
            "what happens if I cheat",
            "can I reuse my own old paper",
            "what counts as academic dishonesty",
            "can I copy code from the internet",
        ),
    ),
    Slot(
        "materials.textbook",
        "textbook",
        "text",
        _p(r"\b(?:text\s*)?books?\b|\brequired\s+(?:text|reading)s?\b|\breadings?\b"),
        _p(
            r"^(?:text\s*books?|required\s+(?:text|reading)s?|books?|readings?|course\s+materials|materials|references?|literature)\s*$"
        ),
        _p(
            r"\btext\s*books?\b|\brequired\s+(?:text|reading)s?\b|\b(?:recommended|required|main|course)\s+(?:book|text)s?\b|\bno\s+(?:required\s+)?(?:text\s*book|book)\b"
        ),
        "materials",
        examples=(
            "is there a textbook",
            "what books do we need",
            "what are the required readings",
            "do I need to buy a book for this course",
            "which edition of the textbook do we use",
        ),
    ),
    Slot(
        "materials.software",
        "software",
        "text",
        _p(
            r"\bwhat\s+software\b|\bsoftware\s+(?:do|should|will)\b|\b(?:which|what)\s+(?:programming\s+)?language\b"
            r"|\bdo\s+(?:i|we)\s+(?:need|use|have)\s+to\s+(?:install|use|know)\b|\b(?:python|R|matlab|stata|julia)\s+or\s+(?:python|R|matlab|stata|julia)\b"
            r"|\bbring\s+(?:a|my|our)\s+laptops?\b|\bneed\s+a\s+laptop\b"
        ),
        _p(r"^(?:software|computing|tools|programming|computer\s+requirements?|technology)\s*$"),
        _p(
            r"\bsoftware\b|\binstall\w*\b|\b(?:we|you)\s+will\s+(?:use|need)\s+(?:python|R|matlab|julia|jupyter|rstudio|a\s+laptop)\b|\bprogramming\s+language\b|\bbring\s+(?:your|a)\s+laptop\b"
            rf"|\b(?:run|use|using|install|know|learn|skilled\s+(?:at|in)|experience\s+(?:with|in)|like|such\s+as|(?:submitted|posted)\s+(?:on|via|through))\s+(?:\w+\s+){{0,2}}(?:{_TOOLS})\b"
        ),
        "materials",
        examples=(
            "what software do we need",
            "which programming language do we use",
            "do I need a laptop",
            "what do I need to install for this class",
            "do we use python or R",
        ),
    ),
)

SLOT_OF: dict[str, Slot] = {s.name: s for s in SLOTS}

# --- values, checked by type ----------------------------------------------------------------------

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
#: A phone number: grouped digits with a separator, never a year, a room or a course code alone.
PHONE = re.compile(r"(?:\+\d{1,3}[\s.-]?)?\(?\b\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}\b")
URL = re.compile(
    r"https?://\S+|\bwww\.\S+|\b[\w-]+(?:\.[\w-]+)*\.(?:edu|com|org|io|net|de|ru|gov)(?:/\S*)?\b", _I
)
_APPOINTMENT = re.compile(
    r"\bby\s+appointment\b|\bupon\s+request\b|\bby\s+request\b|\bTBA\b|\bTBD\b|\bafter\s+class\b", _I
)
#: A time stated by what happens then, or that there is none: "by the start of class", "on the
#: last day of class", "due dates on Canvas", "there will be no midterm exam".
_EVENT_TIME = re.compile(
    r"\b(?:start|beginning|end|last\s+day)\s+of\s+(?:the\s+)?(?:class|lecture|semester|term|quarter)\b"
    r"|\bdue\s+dates?\s+(?:are\s+)?(?:on|in|posted|listed)\b"
    r"|\bno\s+(?:\w+\s+){0,2}(?:exams?|midterms?|finals?|quiz(?:zes)?|tests?)\b",
    _I,
)
#: A place: a room word, a building name before a room number ("Hale B03"), or online.
PLACE = re.compile(
    r"\b(?:room|rm\.?|hall|building|bldg\.?|auditorium|library|lab(?:oratory)?|center|centre|house|classroom|annex|tower)\b"
    r"|\b[A-Z][a-z]+\s+(?:[A-Z]{0,2}\d{1,4}[A-Z]?|\d{1,4}[-–]\d{1,4})\b|\b[A-Z]{1,4}\([A-Z]\)\s*\d{2,4}[A-Z]?\b|\b[A-Z]{2,}\s+[A-Z]\d{3,4}[A-Z]?\b|(?i:\bzoom\b|\bonline\b|\bremote(?:ly)?\b|\bin\s+person\b|\bvirtual\b)",
)
#: A day or a month before a number ("Fridays 10", "March 7"): a time or a date, never a place
#: (the value recogniser's day and month names, by their first three letters).
_DAY_OR_MONTH = re.compile(rf"(?:{'|'.join(sorted({w[:3] for w in (*WEEKDAYS, *MONTHS)}))})[a-z]*\s", _I)


def places(text: str) -> list[str]:
    """The places ``text`` names (:data:`PLACE`), a day or a month before a number left out:
    "Tuesdays 9:00" is a time and "March 7" a date, never a room."""
    return [m.group(0) for m in PLACE.finditer(text) if not _DAY_OR_MONTH.match(m.group(0))]


_POINTS = re.compile(r"\b\d+(?:\.\d+)?\s*(?:points?|pts)\b", _I)
#: A course's credit value: "3 credits", "three credit hours", "6 ECTS", "ECTS: 5".
_CREDITS = re.compile(
    r"\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|eight|ten|twelve)[\s-]+(?:credits?|credit\s+(?:hours?|units?)|ECTS)\b"
    r"|\b(?:ECTS|credits?|credit\s+(?:hours?|units?))\s*[:=]?\s*\d",
    _I,
)
_SCALE = re.compile(r"\b[ABCDF][+-]?\s*[:(=]?\s*\(?\d{2}", re.ASCII)
_PLATFORM = re.compile(rf"\b(?:{_PLATFORMS})\b", _I)
_SITE = re.compile(rf"\b(?:{_SITES})\b", _I)
#: A person's name: two or more capitalised words (initials allowed), titles left out.
_NAME = re.compile(r"\b(?:[A-Z][a-z'’-]+|[A-Z]\.)(?:\s+(?:[A-Z][a-z'’-]+|[A-Z]\.|van|von|de|der|da)){1,3}\b")
_TITLES = re.compile(r"\b(?:dr|prof|professor|mr|mrs|ms|mx)\.?\s+", _I)


def _when(text: str) -> bool:
    """A day, a time or a date is stated (the one value recogniser), or "by appointment"."""
    return bool(_APPOINTMENT.search(text) or _EVENT_TIME.search(text)) or any(
        v.kind in ("weekday", "time", "date") for v in values_in(text)
    )


def _checked(value_type: str, text: str) -> bool:
    """Does ``text`` hold a value of ``value_type``? The one check of a slot's value, for labelled
    values and sentences alike: a room number is never a time, a course code never a phone."""
    if value_type == "email":
        return bool(EMAIL.search(text))
    if value_type == "phone":
        return bool(PHONE.search(text))
    if value_type == "url":
        return bool(URL.search(text))
    if value_type == "site":
        return bool(URL.search(text) or _SITE.search(text))
    if value_type in ("hours", "when"):
        return _when(text)
    if value_type == "place":
        return bool(places(text))
    if value_type == "weight":
        percents = [float(m.group(1)) for m in PERCENT.finditer(text)]
        return bool(percents or _POINTS.search(text)) and all(p <= 100 for p in percents)
    if value_type == "scale":
        return len(_SCALE.findall(text)) >= 2
    if value_type == "term":
        return bool(term_of(text))
    if value_type == "credits":
        return bool(_CREDITS.search(text))
    if value_type == "platform":
        return bool(_PLATFORM.search(text))
    if value_type == "person":
        return bool(_NAME.search(_TITLES.sub("", text)))
    return len(text.split()) >= 3  # a rule is a sentence, not a heading


# --- the card ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """One course fact: its slot, the line or sentence that states it (as printed), whose it is
    (a person's name, or their role), where it is (the chunk ``row`` of the snapshot, its document
    and page), and whether its document is of an older term than another in the collection."""

    slot: str
    text: str
    row: int
    doc_id: str
    file: str
    page: int
    who: str = ""
    role: str = ""
    older: bool = False
    subject: str = ""

    @property
    def shown(self) -> str:
        """The fact on one line as a reader is shown it, led by whose it is where its text does not
        name them ("Bo Lindqvist: Office Hours: By appointment")."""
        text = " ".join(self.text.split())
        return f"{self.who}: {text}" if self.who and self.who.lower() not in text.lower() else text

    def to_json(self) -> list[object]:
        return [
            self.slot,
            self.text,
            self.row,
            self.doc_id,
            self.file,
            self.page,
            self.who,
            self.role,
            self.older,
            self.subject,
        ]

    @classmethod
    def from_json(cls, data: Sequence[object]) -> Fact:
        slot, text, row, doc_id, file, page, who, role, older, subject = data
        return cls(
            str(slot),
            str(text),
            int(str(row)),
            str(doc_id),
            str(file),
            int(str(page)),
            str(who),
            str(role),
            bool(older),
            str(subject),
        )


@dataclass(frozen=True)
class CourseCard:
    """Every fact of a collection, in document order; ``terms``: each document's term, where read."""

    facts: tuple[Fact, ...] = ()
    terms: dict[str, str] = field(default_factory=dict)
    #: documents that are a teacher's course facts (``syllabot card --template``): they win
    teacher: frozenset[str] = frozenset()

    def of(self, slot: str, subjects: Sequence[str] = (), current: bool = True) -> list[Fact]:
        """The facts of ``slot`` (of the courses named, when any; of the current term, unless asked);
        where a teacher's course-facts document fills the slot, its facts alone."""
        facts = [
            f
            for f in self.facts
            if f.slot == slot and (not subjects or f.subject in subjects) and not (current and f.older)
        ]
        mine = [f for f in facts if f.doc_id in self.teacher]
        return mine or facts

    def older_terms(self) -> dict[str, tuple[str, str]]:
        """The documents of a term before the latest one any document of the collection prints, each
        with its term and that latest term ("Fall 2017", "Fall 2018"): last term's syllabus beside
        this term's. What they say is what last term said (``notes.lead_with_term``; their facts
        never answer). Read once per card: every question asks it."""
        return self._older

    @functools.cached_property
    def _older(self) -> dict[str, tuple[str, str]]:
        read = {doc: (term_order(m), text) for doc, text in self.terms.items() if (m := term_of(text))}
        if not read:
            return {}
        latest = max(read.values())
        return {doc: (text, latest[1]) for doc, (order, text) in read.items() if order < latest[0]}

    @functools.cached_property
    def slot_disagreements(self) -> tuple[SlotDisagreement, ...]:
        """The one-value slots two current documents fill differently (:func:`disagreements`)."""
        return _disagreements_of(self)

    def holds_basics(self, subjects: Sequence[str] = ()) -> bool:
        """The card read a syllabus of the course: who teaches it or how it is graded, and one
        more kind of fact besides, or a document named a syllabus (a sparse one says what it
        does not list by not listing it). Only then is an empty slot evidence that no document says it."""
        slots = {f.slot for f in self.facts if (not subjects or f.subject in subjects) and not f.older}
        basics = {"staff.instructor", "staff.email", "grading.weight", "meeting.time"}
        syllabus = any(
            _SYLLABUS.search(f.file)
            for f in self.facts
            if (not subjects or f.subject in subjects) and not f.older
        )
        return (len(slots & basics) >= 2 or syllabus) and len(slots) >= 4

    def to_json(self) -> dict[str, object]:
        return {
            "facts": [f.to_json() for f in self.facts],
            "terms": self.terms,
            "teacher": sorted(self.teacher),
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> CourseCard:
        facts = data.get("facts", [])
        terms = data.get("terms", {})
        teacher = data.get("teacher", [])
        assert isinstance(facts, list) and isinstance(terms, dict) and isinstance(teacher, list)
        return cls(
            tuple(Fact.from_json(f) for f in facts),
            {str(k): str(v) for k, v in terms.items()},
            frozenset(str(d) for d in teacher),
        )


_PLACEHOLDER = re.compile(r"^\s*<[^>]*>\s*$")
#: A document that names itself the course's syllabus (or outline) by its file name.
_SYLLABUS = re.compile(r"syllab|course[\s_-]*(?:outline|info)", _I)
#: A line of a header block printed as "Label value" without a colon ("When Tue & Thu …").
_BARE_LABEL = re.compile(
    r"^(?P<key>When|Where|Who|Web|Instructor|Office\s+Hours|Email|Office|Time|Location|Classroom)\s+(?P<value>\S.*)$"
)


#: Words that only qualify a label ("Recommended literature", "Instructor email") and words that
#: close a heading ("Instructor Contact Information", "Late Work Policy"): the label is what is left.
_LABEL_QUALIFIER = re.compile(
    r"^(?:recommended|required|optional|suggested|additional|main|course|class|online|further|instructor'?s?|ta'?s?)\s+",
    _I,
)
_LABEL_TAIL = re.compile(r"\s+(?:contact\s+)?(?:information|info|details|policy|policies|procedures?)$", _I)
_LABEL_JOIN = re.compile(r"\s+(?:and|&)\s+|\s*/\s*|\s*,\s*", _I)


def _label_keys(label: str) -> tuple[list[str], list[str]]:
    """The keys a label is matched by: the label, each part of a joined one ("Class time and
    location" is a time and a place), and, tried only where those name no slot, each without a
    qualifying first word ("Instructor email", "Recommended literature")."""
    key = " ".join(re.sub(r"\(.*?\)", " ", label).strip().strip(":").lower().split())
    key = _LABEL_TAIL.sub("", key)
    keys = [key, *(p.strip() for p in _LABEL_JOIN.split(key) if p.strip() and p.strip() != key)]
    bare = [b for k in keys if (b := _LABEL_QUALIFIER.sub("", k)) not in keys]
    return keys, bare


def _named_slots(label: str) -> list[Slot]:
    """The slots a label (or a heading) names, its value not yet checked."""
    keys, bare = _label_keys(label)
    for tried in (keys, bare):
        found = [s for s in SLOTS if s.labels is not None and any(s.labels.search(k) for k in tried)]
        if found:
            return found
    return []


def _label_slots(label: str, value: str) -> list[Slot]:
    """The slots a "Label: value" states: each slot whose labels name it and whose value type the
    value has ("Lectures: Mondays 1pm–3pm, K2, Zoom" states when and where). A label joining a
    person's field and another ("Office hours and location") is the person's: its place is no
    class meeting's."""
    found = [s for s in _named_slots(label) if _checked(s.value, value)]
    if any(s.group == "staff" for s in found):
        found = [s for s in found if s.group == "staff"]
    return found


#: The longest a labelled value is kept: a header line the text layer ran into the next
#: paragraph ("Office Hours: By appointment Course Description How can …") is cut between words.
VALUE_CHARS = 160


def _person(value: str) -> str:
    m = _NAME.search(_TITLES.sub("", value))
    return m.group(0) if m else ""


#: A "Label: value" line, a lower-case label too ("* office: Online!" of a Markdown list).
_FIELD = re.compile(r"^(?P<key>[A-Za-z][A-Za-z&/.' ()-]{0,40}?)\s*:\s+\S")


#: How many words of a colon-less label's value must hold its value ("When Tue & Thu, 10:15–11:45").
BARE_WORDS = 5

#: How a line printing several fields parts them ("Instructor: Ada Roe; Email: roe@…; Office: B12").
FIELD_SEPARATOR = "; "


def _segments(line: str) -> list[tuple[str, str]]:
    """A line's "Label: value" fields (``chunking.field_key``; a line of several, parted by
    :data:`FIELD_SEPARATOR`, is each), and a header block's "When Tue & Thu …" printed without
    the colon."""
    out: list[tuple[str, str]] = []
    for part in (p.strip() for p in line.split(FIELD_SEPARATOR)):
        bare = _BARE_LABEL.match(part)
        m = _FIELD.match(part)
        if field_key(part[:1].upper() + part[1:]) is not None or (
            m is not None and _named_slots(m.group("key"))
        ):
            label, value = part.split(":", 1)
        elif bare is not None and _label_slots(
            bare.group("key"), " ".join(bare.group("value").split()[:BARE_WORDS])
        ):
            # a label printed without its colon opens with its value ("When Tue & Thu 10:15"); "When
            # you sign up for a meeting time, …" is a sentence that happens to begin with one
            label, value = bare.group("key"), bare.group("value").lstrip("|–—-: ")
        else:
            continue
        if not _PLACEHOLDER.match(value):  # a template's "<name@school.edu>" left unfilled states nothing
            out.append((label.strip(), value.strip()))
    return out


#: How much of a document's first passage is its header block (title, who, when, where).
HEADER_CHARS = 400
_HEADER_CUT = re.compile(r"\s*(?:\||·|•|;|\.\s+(?=[A-Z0-9]))\s*")


#: The slots that name a person.
_PEOPLE = frozenset({"staff.ta", "staff.instructor"})
#: An event of its own in a header block's dated piece: an exam, a deadline, office hours.
_OTHER_EVENT = re.compile(
    r"\b(?:exams?|midterms?|finals?|quiz(?:zes)?|tests?|due|deadlines?|office\s+hours?|presentations?)\b", _I
)


def _header_facts(text: str) -> list[tuple[Slot, str, str, str]]:
    """The facts of a header block printed without labels ("LA 1234 | Title Jo Smith jo@x.edu
    Fall 2030. Studio 217. Tuesday & Thursday 12:30–3:20pm."), each piece read by its value type
    alone: an email (and the name printed just before it: the instructor), a day with a time (the
    meetings), and, in a header that holds one of those, a short piece naming a place."""
    found: list[tuple[Slot, str, str, str]] = []
    rooms: list[str] = []
    role = "staff.instructor"  # whose the next email is: a piece naming a role sets it ("TAs • …")
    for piece in _HEADER_CUT.split(text[:HEADER_CHARS]):
        piece = piece.strip()
        if not piece:
            continue
        # a piece ending in a role's name heads the pieces after it ("… Teaching Assistants • Jo Park")
        words = piece.split()
        named = {s.name for n in (1, 2, 3) for s in _named_slots(" ".join(words[-n:]))} & _PEOPLE
        if ": " in piece or (named and len(words) <= 3):
            role = named.pop() if len(named) == 1 else role
            continue  # a labelled field is read by _segments
        email = EMAIL.search(piece)
        if email is not None:
            before = piece[: email.start()].split()
            while before and (before[-1] in ("–", "—", "-", "|") or _named_slots(before[-1])):
                before.pop()  # "Mara Quill Email – quill@…": the label is no part of the name
            names = _NAME.findall(_TITLES.sub("", " ".join(before)))
            # the name printed just before the email: its last two words (three with an initial)
            words = names[-1].split() if names else []
            who = " ".join(words[-3:] if len(words) >= 3 and words[-2].endswith(".") else words[-2:])
            if who:
                found.append((SLOT_OF[role], who, who, role))
            text_ = piece if len(piece) <= VALUE_CHARS else email.group(0)
            found.append((SLOT_OF["staff.email"], text_, who, role))
            continue
        values = {v.kind for v in values_in(piece)}
        if "time" in values and ("weekday" in values or "date" in values) and len(piece.split()) <= 12:
            if not _OTHER_EVENT.search(piece):  # "The final exam is on Thursday, 9:00" is no class meeting
                found.append((SLOT_OF["meeting.time"], piece, "", ""))
        elif len(piece.split()) <= 4 and places(piece) and not term_of(piece):
            rooms.append(piece)
    if found:
        found += [(SLOT_OF["meeting.place"], p, "", "") for p in rooms[:2]]
    return found


#: The context line the chunker puts first ("Syllabus — Late Work Policy"): its heading part.
_CONTEXT_SEP = " — "


def _body_lines(chunk: Chunk) -> tuple[list[str], str]:
    """The chunk's lines without the context line the chunker puts first for the embedder, and the
    section heading that context line names ("Title — Late Homework Policy"), if any."""
    lines = chunk.text.split("\n")
    heading = ""
    if len(lines) > 1:
        first = lines[0].strip()
        names = {chunk.title, chunk.subject or "", chunk.file, chunk.file.rsplit(".", 1)[0]} - {""}
        head, sep, rest = first.partition(_CONTEXT_SEP)
        if first in names:
            lines = lines[1:]
        elif sep and head.strip() in names:
            lines, heading = lines[1:], rest.strip()
    return [ln for ln in (_clean(ln) for ln in lines) if ln], heading


_MARKDOWN_LINK = re.compile(r"\[([^\]]+)\]\((\S+?)\)")
_EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")


def _clean(line: str) -> str:
    """A line as read: Markdown emphasis and links undone ("* **Time**: MWF" is "* Time: MWF"),
    tabs and runs of spaces one space."""
    line = _MARKDOWN_LINK.sub(r"\1 (\2)", line)
    bullet = re.match(r"^\s*\*\s+", line)
    head, body = (line[: bullet.end()], line[bullet.end() :]) if bullet else ("", line)
    return " ".join((head + _EMPHASIS.sub("", body)).split())


_MAX_SENTENCE = 420

#: A list item's mark at a line's start ("• ", "* ", "- ", "3. ", "▶ "), and items run into one
#: line by the text layer ("… installed: . python 3; . numpy, scipy;", "▶ a ▶ b").
_ITEM_MARK = re.compile(r"^(?:[*\-–•●▪◦■▶]|\d{1,2}[.)]\)?|\.)\s+")
_INLINE_MARK = re.compile(r"\s+[•●▪◦■▶]\s+|(?<=\S)\s+\.\s+(?=\S)")
#: A printed reference: "Author, A. 2016. Title" or "Author, First, and Other. 2013."
_REFERENCE = re.compile(
    rf"\b[A-Z][a-z'’-]+,\s+(?:[A-Z]\.|[A-Z][a-z]+)[^.]{{0,80}}?\.?\s*\(?{YEAR}[a-z]?\)?[.,]"
)
#: A sentence or piece that leads a list ("… make sure you have installed:", "listed below.").
_LEADS = re.compile(r":\s*$|\b(?:listed|as\s+follows|the\s+following|below)\b[^.]*[.:]?\s*$", _I)
#: Slots a list states item by item: people, books, tools, what to know, and rules "as follows".
_LISTED = frozenset({"staff.ta", "staff.instructor"})
#: A rule or a list of things is addressed to the reader or about the course: a slide's
#: "Collaborative filtering" or "Bonus: boosting" is no policy.
_ADDRESSED = re.compile(
    r"\b(?:you|your|students?|we|our|us|class|course|instructor|professor|(?-i:TAs?|I)|me|my|will|must|should|may"
    r"|cannot|allowed|permitted|required|expected|encouraged|recommended|helpful|necessary|penal\w+)\b",
    _I,
)


def _lead_slots(text: str) -> list[Slot]:
    """The slots a list's lead names: a short heading-like piece by its label ("TA", "Recommended
    literature", "9. Topics Literature:"), else a leading sentence by its cues ("The course has
    two textbooks:", "make sure you have installed:")."""
    words = text.strip().rstrip(":").split()
    if not words:
        return []
    for n in (len(words),) if len(words) <= 5 else ():
        found = _named_slots(" ".join(words[-n:]))
        if found:
            return found
    if text.rstrip().endswith(":"):
        for n in (1, 2, 3):
            found = _named_slots(" ".join(words[-n:]))
            if found:
                return found
    sentences = split_sentences(text)
    last = sentences[-1] if sentences else text
    if _LEADS.search(last) and _ADDRESSED.search(last):
        return [
            s
            for s in SLOTS
            if s.cues is not None and s.cues.search(last) and (s.value == "text" or s.name in _LISTED)
        ]
    return []


def _item_fact(slot: Slot, item: str) -> tuple[str, str] | None:
    """(text, who) of a list item under a lead of ``slot``: a person's name, a book, a tool or a
    rule; None where the item is not of the slot's type."""
    if slot.name in _LISTED:
        who = _person(item)
        return (item, who) if who and len(item.split()) <= 6 else None
    if slot.value == "text":
        return (clip(item, _MAX_SENTENCE), "") if re.search(r"[A-Za-z]{2}", item) else None
    return (clip(item, VALUE_CHARS), "") if _checked(slot.value, item) else None


@dataclass
class _Reading:
    """Where a document's reading stands between its lines and passages: the list being read (its
    lead's slots), the person whose record or list the fields are of, whether the last piece read
    was a "Label: value" field (a person's fields run on in the lines after their name), and the
    last passage's lines (the next passage's window repeats its tail)."""

    lead: list[Slot] = field(default_factory=list)
    who: str = ""
    role: str = ""
    labelled: bool = False
    lines: list[str] = field(default_factory=list)


def _pieces(line: str) -> list[tuple[str, bool]]:
    """A line's pieces and whether each is a list item."""
    first_item = bool(_ITEM_MARK.match(line))
    line = _ITEM_MARK.sub("", line, count=1)
    parts = [p.strip() for p in _INLINE_MARK.split(line)]
    return [(p, first_item or n > 0) for n, p in enumerate(parts) if p.strip(" .;")]


def _facts_of_line(
    line: str, state: _Reading, heading: Sequence[Slot] = ()
) -> Iterable[tuple[Slot, str, str, str]]:
    """(slot, text, who, role) of each fact a line states: its labelled fields first (a person's
    record gives its email, office and hours to that person), the items of a list under a lead
    ("TA" then "* Ria Kim"; "Literature:" then its books), then its sentences by their cues."""
    for piece, item in _pieces(line):
        referenced = any(s.name == "materials.textbook" for s in state.lead) and _REFERENCE.search(piece)
        labelled = bool(_segments(piece))
        if not item and not referenced:
            state.lead = []
            if not (labelled and state.labelled):
                # a header block's lines are one person's until the next name ("Instructor: …",
                # "Email: …", "Office hours: …", then "Teaching Assistant: …"); prose ends them
                state.who, state.role = "", ""
        state.labelled = labelled
        yield from _facts_of_piece(piece, item or bool(referenced), state, heading)
        if piece.rstrip().endswith(":") or not item:
            lead = _lead_slots(piece)
            if not lead and not item:
                m = re.match(r"^((?:[A-Z][a-z]+\s+)?[A-Z][a-z]+)\s+(?=[A-Z])", piece)
                lead = [s for s in _named_slots(m.group(1)) if s.value == "text"] if m else []
            state.lead = lead or ([] if piece.rstrip().endswith(":") else state.lead)


def _facts_of_piece(
    piece: str, item: bool, state: _Reading, heading: Sequence[Slot]
) -> Iterable[tuple[Slot, str, str, str]]:
    fields = _segments(piece)
    labelled = False
    for n, (label, value) in enumerate(fields):
        text = f"{label}: {clip(value, VALUE_CHARS)}"
        for slot in _label_slots(label, value):
            labelled = True
            if slot.name in ("staff.instructor", "staff.ta"):
                if n == 0 or not state.who:
                    state.who, state.role = _person(value), slot.name
                yield slot, text, state.who, state.role
            else:
                staff = slot.group == "staff"
                yield slot, text, state.who if staff else "", state.role if staff else ""
                if slot.name == "staff.office_hours" and _ROOM.search(value):
                    # "Office hours: Friday 10-11 am, CODA S1323": where they are held is the office
                    yield SLOT_OF["staff.office"], text, state.who, state.role
    if not labelled and item:
        for slot in state.lead or [s for s in heading if s.name in _LISTED]:
            made = _item_fact(slot, piece)
            if made is not None:
                labelled = True
                text, who = made
                if slot.name in _LISTED:
                    state.who, state.role = who, slot.name
                yield slot, text, who, slot.name if slot.name in _LISTED else ""
        fields = []
    if labelled and (len(fields) >= 2 or not fields or item or state.who):
        return  # a record, a person's field, or an item of a list: its fields are its facts
    if _PLACEHOLDER.match(piece.split(":", 1)[-1]):
        return  # a template's guidance or an unfilled line
    for sentence in split_sentences(piece):
        if len(sentence) > _MAX_SENTENCE or len(sentence.split()) < 3:
            continue
        labelled_by = _named_slots(sentence.split()[0])  # "Software GRASS GIS | …": a label, then its list
        for slot in SLOTS:
            if (
                slot.cues is not None
                and slot.cues.search(sentence)
                and _checked(slot.value, sentence)
                and (slot.value != "text" or slot in labelled_by or _ADDRESSED.search(sentence))
            ):
                yield slot, sentence, "", ""
    # a paragraph under a rule's heading ("Late Homework & Extension Policy") is that rule, whole
    rules = [s for s in heading if s.group == "policy"]
    if rules and not item and len(piece.split()) >= 6:
        cued = [s for s in rules if s.cues is not None and s.cues.search(piece)] or rules[:1]
        for slot in cued:
            yield slot, clip(piece, _MAX_SENTENCE), "", ""


#: A room in an office-hours value ("Friday 10-11 am, CODA S1323"); online is no office.
_ROOM = re.compile(
    r"\b(?:room|rm\.?|hall|building|bldg\.?)\s*\w*\d|\b[A-Z][A-Za-z]+\s+[A-Z]{0,2}\d{2,4}[A-Z]?\b(?<!\b(?:am|pm)\b)"
)
#: A named assessment and its weight ("Lab Exercises (40%)"), read where a document's named
#: weights add up to the whole grade or the name is an assessment's.
_WEIGHT_ITEM = re.compile(
    r"(?<![\w(])(?P<name>(?:[A-Z][\w'’-]*\s+){0,3}[A-Z][\w'’-]*)\s*\(\s*(?P<pct>\d{1,3}(?:\.\d+)?)\s*%\s*\)"
)
_ASSESSMENT = re.compile(
    r"\b(?:homeworks?|assignments?|exams?|midterms?|finals?|quiz(?:zes)?|tests?|projects?|papers?|reports?|essays?"
    r"|labs?|participation|attendance|presentations?|problem\s+sets?|psets?|posters?|portfolios?|journals?)\b",
    _I,
)


def _weights(chunks: Sequence[Chunk]) -> dict[str, list[tuple[int, str]]]:
    """Each document's named weights ("Poster Presentation (15%)"): (row, text) of those read as
    grading weights, all of a document whose named weights sum to 100%, else those naming an
    assessment."""
    found: dict[str, dict[str, tuple[int, str, float]]] = {}
    for row, chunk in enumerate(chunks):
        for m in _WEIGHT_ITEM.finditer(chunk.text):
            name = m.group("name").strip()
            found.setdefault(chunk.doc_id, {}).setdefault(
                name.lower(), (row, f"{name} ({m.group('pct')}%)", float(m.group("pct")))
            )
    out: dict[str, list[tuple[int, str]]] = {}
    for doc, named in found.items():
        whole = abs(sum(p for _, _, p in named.values()) - 100) < 0.5
        out[doc] = [(row, text) for key, (row, text, _) in named.items() if whole or _ASSESSMENT.search(key)]
    return out


def _scale_rows(lines: Sequence[str]) -> list[tuple[Slot, str, str, str]]:
    """A letter-grade scale printed one grade a row ("A | 93–100" / "A- | 90–92" / …): three or
    more rows of a passage read together as the scale, from its first grade to its last."""
    rows = [line for line in lines if _SCALE.search(line)]
    if len(rows) < 3:
        return []
    return [(SLOT_OF["grading.scale"], clip(" ".join(rows), _MAX_SENTENCE), "", "")]


def read_card(chunks: Sequence[Chunk], check: Callable[[], None] | None = None) -> CourseCard:
    """The card of a collection's chunks (pure; the snapshot builds it once, at index time).
    ``check``: a build's cancel check, called per passage read."""
    facts: list[Fact] = []
    seen: set[tuple[str, str, str, str]] = set()
    term_text: dict[str, str] = {}
    teacher: set[str] = set()
    headed: set[str] = set()
    reading: dict[str, _Reading] = {}
    weights = _weights(chunks)

    def add(row: int, chunk: Chunk, slot: Slot, text: str, who: str = "", role: str = "") -> None:
        key = (chunk.doc_id, slot.name, who, _norm(text))
        if key not in seen:
            seen.add(key)
            page, subject = chunk.page or 0, chunk.subject or ""
            facts.append(
                Fact(slot.name, text, row, chunk.doc_id, chunk.file, page, who, role, subject=subject)
            )

    for row, chunk in enumerate(chunks):
        if check is not None:
            check()
        if _is_facts_document(chunk):
            teacher.add(chunk.doc_id)
        lines, heading = _body_lines(chunk)
        stated: list[tuple[Slot, str, str, str]] = []
        # a term and a header block are read from a document's first page only: a deck citing
        # "Fall 2019" later on is no term
        first_page = (chunk.page or 1) <= 1
        if first_page and chunk.doc_id not in headed:
            headed.add(chunk.doc_id)
            stated += _header_facts(" ".join(lines))
        if first_page and chunk.doc_id not in term_text:
            found = next(
                (
                    (m, line)
                    for line in lines
                    if (m := term_of(line)) and not _PLACEHOLDER.match(line.split(":", 1)[-1])
                ),
                None,
            )
            if found is not None:
                m, line = found
                term_text[chunk.doc_id] = m.group(0)
                stated.append((SLOT_OF["course.term"], clip(line, VALUE_CHARS), "", ""))
        # a list or a person's fields run on into the next passage of its document: the lines its
        # window repeats from the one before were read there, and the reading goes on after them
        state = reading.setdefault(chunk.doc_id, _Reading())
        repeated = _repeated(state.lines, lines)
        if not repeated and not (lines and (_ITEM_MARK.match(lines[0]) or _REFERENCE.search(lines[0][:120]))):
            state.lead, state.who, state.role, state.labelled = [], "", "", False
        state.lines = lines
        heading_slots = _named_slots(heading) if heading else []
        for line in lines[repeated:]:
            stated += _facts_of_line(line, state, heading_slots)
        if not any(slot.name == "grading.scale" for slot, *_ in stated):
            stated += _scale_rows(lines)
        for slot, text, who, role in stated:
            if not text.rstrip().endswith(":"):  # a lead-in says nothing without the items it leads
                add(row, chunk, slot, text, who, role)
    for doc_weights in weights.values():
        for row, text in doc_weights:
            add(row, chunks[row], SLOT_OF["grading.weight"], text)
    facts.sort(key=lambda f: f.row)
    card = CourseCard(tuple(facts), term_text, frozenset(teacher))
    older = card.older_terms()
    return replace(card, facts=tuple(replace(f, older=f.doc_id in older) for f in facts)) if older else card


def _repeated(before: Sequence[str], lines: Sequence[str]) -> int:
    """How many of ``lines`` (a passage's) repeat the last lines of the passage ``before`` it: the
    overlap of the chunker's windows."""
    for n in range(min(len(before), len(lines)), 0, -1):
        if list(lines[:n]) == list(before[-n:]):
            return n
    return 0


def _is_facts_document(chunk: Chunk) -> bool:
    """A teacher's course-facts document: its title, or its first line, is the template's heading."""
    head = chunk.text.lstrip().split("\n", 1)[0]
    return any(FACTS_HEADING.lower() == t.strip().strip("#").strip().lower() for t in (chunk.title, head))


# --- questions --------------------------------------------------------------------------------------


def asked_slots(question: str) -> tuple[str, ...]:
    """The slots a cleaned question asks about, the one its words name most fully first ("where
    are office hours held" asks office hours before a place; "prof office hrs and which room"
    asks office hours and the office)."""
    spans = []
    for n, slot in enumerate(SLOTS):
        m = slot.asks.search(question)
        if m is not None:
            spans.append((-(m.end() - m.start()), -n, slot.name))
    return tuple(name for _, _, name in sorted(spans))


#: How close (cosine) a question whose words name no slot must come to one of a slot's
#: :attr:`Slot.examples` to ask it (picked on the tuning courses, ``docs/BENCHMARKS.md``).
SLOT_COSINE = 0.8


@dataclass(frozen=True)
class SlotMeanings:
    """Every slot's examples as unit vectors of one embedder (row ``i`` is an example of slot
    ``names[i]``), embedded once per embedder (``Engine``)."""

    embedder_id: str
    names: tuple[str, ...]
    vectors: np.ndarray


def slot_meanings(embedder_id: str, embed: Callable[[list[str]], np.ndarray]) -> SlotMeanings:
    """The slots' examples embedded by ``embed`` (the embedder's query side)."""
    pairs = [(slot.name, example) for slot in SLOTS for example in slot.examples]
    return SlotMeanings(embedder_id, tuple(n for n, _ in pairs), np.asarray(embed([e for _, e in pairs])))


def slot_by_meaning(vector: np.ndarray, meanings: SlotMeanings) -> str | None:
    """The slot a question asks by meaning: the slot of its nearest example, when at least
    :data:`SLOT_COSINE` close. Why: the slots' question words are patterns, and students ask in
    more ways than patterns hold ("how does my final grade get worked out", "may my lab partner and
    I share one glaze journal"); the embedder reads them by meaning."""
    if not len(meanings.names):
        return None
    scores = meanings.vectors @ np.asarray(vector, dtype=meanings.vectors.dtype)
    best = int(np.argmax(scores))
    return meanings.names[best] if float(scores[best]) >= SLOT_COSINE else None


_ROLE_WORDS = (
    (
        "staff.ta",
        re.compile(r"\bTAs?\b|\bteaching\s+(?:assistants?|fellows?)\b|\btutors?\b|\bgraders?\b", _I),
    ),
    (
        "staff.instructor",
        re.compile(r"\binstructor|\bprofessor|\bprof(?:s|'s|’s)?\b|\blecturer|\bteacher|\bdr\.?\s", _I),
    ),
)


@dataclass(frozen=True)
class CardAnswer:
    """What the card says of a question: the asked slot, the facts that fill it best first (empty:
    the card holds none), whether the card read the course's syllabus basics (an empty slot is then
    evidence), the closest fact of the slot's group for an empty slot, and the passage numbers the
    facts are cited by (filled by retrieval)."""

    slot: str
    facts: tuple[Fact, ...] = ()
    read: bool = False
    closest: Fact | None = None
    numbers: tuple[int, ...] = ()
    strong: bool = False


#: The most facts an answer from the card quotes.
MAX_FACTS = 3


def _named_people(card: CourseCard, question: str) -> set[str]:
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", question)}
    return {f.who for f in card.facts if f.who and words & {w.lower() for w in f.who.split() if len(w) >= 3}}


#: Slots whose emptiness proves nothing even once the card read a syllabus: due dates are printed
#: in schedules, tables and assignment sheets in more forms than the card reads, where work is handed
#: in as a drive path, a portal or an assignment sheet's last line (tuning: a course's network
#: drive was told "not in your materials"), and a syllabus that names no instructor the card could
#: read (a name printed alone, a redacted one) still has one. Every other slot
#: the card reads by label, list and cue, so a course whose syllabus it read and that fills the
#: slot nowhere does not state it (the passages are still read for it: ``passages``).
NO_ABSENCE = frozenset({"dates.due", "staff.instructor", "course.submission"})
#: Slots of one typed value each (per person, where staff): a fact of the asked one answers.
TYPED = frozenset(
    {
        "staff.phone",
        "staff.email",
        "staff.office_hours",
        "staff.office",
        "staff.ta",
        "staff.instructor",
        "meeting.time",
        "meeting.place",
        "course.website",
        "course.discussion",
        "course.term",
        "course.credits",
    }
)


def answer_from_card(
    card: CourseCard,
    slots: Sequence[str],
    question: str,
    subjects: Sequence[str] = (),
    unknown: Collection[str] = (),
    passages: Sequence[str] = (),
) -> CardAnswer | None:
    """The card's answer to a question asking ``slots`` (None: it asks none, or the card is empty).

    The facts of the first asked slot that the card fills, for the person the question names (or
    the role it names: "TA", "prof"), ranked by how many of the question's words they hold.
    ``strong`` (the answer can be confident) when the slot is one typed value (who, when, where,
    contact) and the facts are the asked person's, or few; any other slot when its best fact holds
    the question's own topic words and no other fact holds as many. An empty slot is an answer
    for every slot but :data:`NO_ABSENCE`. ``unknown``: the question's words the collection never
    uses (chat words, typing), which name nothing the fact must hold. ``passages``: the texts
    search found; an empty slot is no answer where one of them speaks of it in words the card
    could not read ("Office hours are held after each lab in the studio")."""
    if not slots or not card.facts:
        return None
    name = slots[0]
    slot = SLOT_OF[name]
    people = _named_people(card, question)
    role = next((r for r, pattern in _ROLE_WORDS if pattern.search(question)), "")
    facts = card.of(name, subjects)
    if slot.group == "staff" and name not in ("staff.ta", "staff.instructor"):
        if people:
            facts = [f for f in facts if f.who in people]
        elif role == "staff.ta":
            facts = [f for f in facts if f.role == "staff.ta"]
        elif role:
            facts = [f for f in facts if f.role != "staff.ta"]
    if not facts:
        # every slot the question asks is empty ("which building are office hours in" asks a place
        # and office hours: hours listed, no absence), the role words aside ("the TA's email")
        others = [s for s in slots[1:] if s not in ("staff.ta", "staff.instructor") and card.of(s, subjects)]
        if name in NO_ABSENCE or others or any(_speaks_of(slot, text) for text in passages):
            return None
        # the closest fact: how else to reach the person, or when and where the class meets; a rule,
        # a book or a weight is no stand-in for another (a late policy for "is attendance required")
        near = (
            [
                f
                for f in card.facts
                if SLOT_OF[f.slot].group == slot.group
                and not f.older
                and (not subjects or f.subject in subjects)
            ]
            if slot.group in _STAND_INS
            else []
        )
        # the closest fact: the person's (or role's) own, the way to reach them first
        near.sort(key=lambda f: (not (f.who in people or f.role == role), _NEAREST.get(f.slot, 9), f.row))
        return CardAnswer(name, (), card.holds_basics(subjects), near[0] if near else None)
    q_terms = term_set(question)
    asking = slot.asks.search(question)
    # the everyday words that asked for the slot ("deadline", "how much … count") are no topic;
    # a subject word inside the asking span ("what day was the correlation lecture") is
    said = re.findall(r"[a-z]{3,}", asking.group(0).lower()) if asking else []
    topic = q_terms - term_set(" ".join(w for w in said if common(w))) - term_set(slot.says) - _SLOT_WORDS

    def score(f: Fact) -> tuple[int, int, bool, int]:
        words = term_set(f"{f.text} {f.who}")
        # on a tie, the syllabus's fact before a slide's
        return (len(topic & words), len(q_terms & words), bool(_SYLLABUS.search(f.file)), -f.row)

    ranked = _distinct(sorted(facts, key=score, reverse=True))
    best = score(ranked[0])[0]
    chosen = tuple(ranked[:MAX_FACTS])
    if name in TYPED:
        # something else the materials speak of, named and not in the fact ("which room is the
        # final exam in", "are office hours on zoom too"): the slot's value may not be its answer
        fact_terms = term_set(f"{chosen[0].text} {chosen[0].who}")
        absent = term_set(" ".join(unknown))
        elsewhere = {
            w
            for w in re.findall(r"[a-z]{3,}", question.lower())
            if (t := term_set(w)) and t <= topic and not t & fact_terms and not t & absent and not common(w)
        }
        strong = (
            not elsewhere
            and not (topic & _EVENTS - fact_terms)
            and (bool(people) or len({_norm(f.text) for f in facts}) <= MAX_FACTS)
        )
    else:
        runner = score(ranked[1])[0] if len(ranked) > 1 else 0
        # facts tied at the best that state one value ("Glaze journal (20%)" in the syllabus and
        # again on the first day's slides) are one answer, not two candidates
        tied = [f for f in ranked if score(f)[0] == best]
        agree = len({_stated(f.text) for f in tied}) == 1 and bool(_stated(tied[0].text))
        # a question that asks a rule itself ("late policy?") is answered by the rule's facts
        strong = ((best > runner or agree) and best >= max(1, (len(topic) + 1) // 2)) or (
            not topic and slot.group == "policy" and len(facts) <= MAX_FACTS
        )
        if strong and best > runner and slot.value != "text":
            # one value holds what was asked ("how much is homework worth"): the others are noise
            # (a rule's sentences are not cut: the one beside the best often says the rest)
            chosen = tuple(f for f in chosen if score(f)[0] == best)
    return CardAnswer(name, chosen, card.holds_basics(subjects), None, (), strong)


def _distinct(facts: Sequence[Fact]) -> list[Fact]:
    """``facts`` in order without one that says again what one before it says: the same sentence
    read from two overlapping passages, or read once with the next heading run into it ("… up to
    48 hours." and "… up to 48 hours. 6 Honor code")."""
    kept: list[Fact] = []
    for fact in facts:
        text = _norm(fact.text)
        if any(text in _norm(k.text) or _norm(k.text) in text for k in kept):
            continue
        kept.append(fact)
    return kept


def _stated(text: str) -> frozenset[str]:
    """The exact values (percents, dates, times, days) a fact states, as the recogniser reads them."""
    return frozenset(f"{v.kind}:{v.norm}" for v in values_in(text) if v.kind in _EXACT)


#: The kinds of value read exactly enough that two facts stating the same one agree.
_EXACT = frozenset({"percent", "date", "time", "weekday"})

#: The groups whose facts stand in for one another when a slot is empty: a person's contacts,
#: the class's meetings.
_STAND_INS = frozenset({"staff", "meeting"})

#: Which fact of an empty slot's group is shown first: how to reach the person, then when and where.
_NEAREST = {"staff.email": 0, "staff.office_hours": 1, "staff.office": 2, "staff.instructor": 3}

#: Course events and things of their own: a question naming one asks about it, not the class's
#: room or hours ("where do lecture notes get posted" asks no meeting place).
_EVENTS = term_set(
    "exam midterm final quiz test poster session presentation project paper assignment homework "
    "submit submission review lab report notes slides handouts recordings posted uploaded"
)


def _speaks_of(slot: Slot, text: str) -> bool:
    """Does a passage speak of the slot (its question words or its sentence cues)?"""
    return bool(slot.asks.search(text) or (slot.cues is not None and slot.cues.search(text)))


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


_SLOT_WORDS = term_set(
    "when where what which who how is are the class course lecture time day days office hours email instructor professor "
    "prof profs TA TAs teaching assistant policy due date exam worth grade deadline"
)


# --- the teacher's view -----------------------------------------------------------------------------

#: The heading of a teacher's course-facts document (``syllabot card --template``): what it states
#: wins over every other document for the slots it fills, as a newer version does.
FACTS_HEADING = "Course facts"

#: The template's lines, (label, hint): one "Label:" per slot the reader reads from a label, in the table's order.
TEMPLATE_LABELS = (
    ("Term", "e.g. Fall 2026"),
    ("Website", "https://…"),
    ("Discussion", "e.g. Slack, Piazza, Ed Discussion"),
    ("Credits", "e.g. 3 credit hours"),
    ("Recordings", "whether lectures are recorded, and where they are posted"),
    ("Prerequisites", "what students must have taken or know"),
    ("Instructor", "name"),
    ("Email", "name@school.edu"),
    ("Office", "building and room"),
    ("Office hours", "days and times, or by appointment"),
    ("Teaching assistant", "name (one line each; put their Email/Office/Office hours after it)"),
    ("Lectures", "days and times"),
    ("Classroom", "building and room, or online"),
    ("Late work", "the rule, as a sentence"),
    ("Extensions", "missed exams, make-ups, extensions"),
    ("Extra credit", "the rule, or that there is none"),
    ("Attendance", "the rule"),
    ("Collaboration", "the rule"),
    ("AI tools", "the rule on ChatGPT and similar tools"),
    ("Accommodations", "who to contact"),
    ("Textbooks", "title(s), or that none is required"),
    ("Software", "what to install or use"),
)


def template() -> str:
    """A Markdown course-facts document a teacher fills in and uploads to correct or add facts."""
    lines = [
        f"# {FACTS_HEADING}",
        "",
        "<Fill in what students should be told and index this file; lines left as they are state nothing."
        " What it states wins over the other documents for the same facts. Weights one line each, dates"
        " as dates.>",
        "",
    ]
    lines += [f"{label}: <{hint}>" for label, hint in TEMPLATE_LABELS]
    lines += ["Grading: <component and weight, e.g. Homework 40%>", "Midterm: <date>", "Final exam: <date>"]
    return "\n".join(lines) + "\n"


#: Slots that hold one value (per person): two current documents stating two are a disagreement.
#: Not a website or a forum (a course posts on Canvas *and* GitHub), nor the term (each document's
#: own; an older term's facts are last term's, ``CourseCard.older_terms``), nor people (a course has
#: several TAs).
ONE_VALUE = frozenset(
    {"staff.office_hours", "staff.email", "staff.phone", "staff.office", "meeting.time", "meeting.place"}
)


@dataclass(frozen=True)
class SlotDisagreement:
    """Two current documents that fill one typed slot (for one person) differently."""

    slot: str
    who: str
    first: Fact
    second: Fact


def disagreements(card: CourseCard) -> list[SlotDisagreement]:
    """Typed slots two current documents fill differently (a teacher's course-facts document
    settles its slots, so those are none): the note names both, with their documents and pages.
    Read once per card (``CourseCard.slot_disagreements``): an answer on a slot asks every time."""
    return list(card.slot_disagreements)


def _person_key(who: str) -> str:
    """One person however named: "Bo Lindqvist" on the slides, "Bo K. Lindqvist" in the README."""
    return who.split()[-1].lower() if who else ""


def _disagreements_of(card: CourseCard) -> tuple[SlotDisagreement, ...]:
    out: list[SlotDisagreement] = []
    groups: dict[tuple[str, str, str], list[Fact]] = {}
    for f in card.facts:
        if f.slot in ONE_VALUE and not f.older:
            groups.setdefault((f.subject, f.slot, _person_key(f.who)), []).append(f)
    for (_, slot, _person), facts in groups.items():
        who = facts[0].who
        if any(f.doc_id in card.teacher for f in facts):
            continue
        by_doc: dict[str, Fact] = {}
        for f in facts:
            by_doc.setdefault(f.doc_id, f)
        firsts = list(by_doc.values())
        for a, b in itertools.pairwise(firsts):
            if _differ(slot, a.text, b.text):
                out.append(SlotDisagreement(slot, who, a, b))
                break
    return tuple(out)


def disagreement_on(card: CourseCard, answer: CardAnswer) -> SlotDisagreement | None:
    """The disagreement on the slot ``answer`` quotes, of the person its first fact is (the card's
    :func:`disagreements`): what the answer must say beside its quote."""
    if not answer.facts or answer.slot not in ONE_VALUE:
        return None
    first = answer.facts[0]
    person = _person_key(first.who)
    for found in card.slot_disagreements:
        if (
            found.slot == answer.slot
            and _person_key(found.who) == person
            and found.first.subject == first.subject
        ):
            return found
    return None


def _typed_values(slot: str, text: str) -> dict[str, frozenset[str]]:
    """What a fact states of its slot's value type, by kind, as the recognisers read it: days,
    times and dates for a time slot; emails, phone digits and places (:data:`ONE_VALUE`). Why
    typed: two sentences that word one fact differently ("Office hours are by appointment" and "Book
    office hours by email") are no disagreement; two days are."""
    value_type = SLOT_OF[slot].value
    if value_type in ("hours", "when"):
        found: dict[str, set[str]] = {}
        for v in values_in(text):
            if v.kind in ("weekday", "time", "date"):
                found.setdefault(v.kind, set()).add(v.norm)
        return {k: frozenset(v) for k, v in found.items()}
    read = _VALUE_READERS.get(value_type)
    values = frozenset(read(text)) if read is not None else frozenset()
    return {value_type: values} if values else {}


#: How :func:`_typed_values` reads the values of a contact or a room.
_VALUE_READERS: dict[str, Callable[[str], list[str]]] = {
    "email": lambda t: [m.lower() for m in EMAIL.findall(t)],
    "phone": lambda t: ["".join(ch for ch in m if ch.isdigit()) for m in PHONE.findall(t)],
    "place": lambda t: [" ".join(m.lower().split()) for m in places(t) if any(c.isdigit() for c in m)],
}


def _differ(slot: str, a: str, b: str) -> bool:
    """Two facts of ``slot`` state different values of one kind (:func:`_typed_values`)."""
    va, vb = _typed_values(slot, a), _typed_values(slot, b)
    return any(va[k] != vb[k] for k in va.keys() & vb.keys())


def card_lines(card: CourseCard) -> list[str]:
    """The card as a teacher reads it: each slot with its facts and where each is printed, the
    slots no document fills, and the disagreements by slot."""
    lines: list[str] = []
    for slot in SLOTS:
        facts = [f for f in card.facts if f.slot == slot.name]
        if not facts:
            lines.append(f"{slot.says}: not stated in any document")
            continue
        lines.append(f"{slot.says}:")
        for f in facts[: MAX_FACTS * 2]:
            where = f"{f.file}" + (f", p. {f.page}" if f.page else "")
            flag = " (older term)" if f.older else " (your course facts)" if f.doc_id in card.teacher else ""
            lines.append(f"  - {clip(f.shown, VALUE_CHARS)} [{where}]{flag}")
        if len(facts) > MAX_FACTS * 2:
            lines.append(f"  … and {len(facts) - MAX_FACTS * 2} more")
    found = disagreements(card)
    if found:
        lines.append("")
        lines.append(f"Disagreements ({len(found)}):")
        for d in found:
            owner = f" ({d.who})" if d.who else ""
            lines.append(
                f"  - {SLOT_OF[d.slot].says}{owner}: “{clip(d.first.text, VALUE_CHARS)}” [{d.first.file}, "
                f"p. {d.first.page}] vs “{clip(d.second.text, VALUE_CHARS)}” [{d.second.file}, p. {d.second.page}]"
            )
    return lines
