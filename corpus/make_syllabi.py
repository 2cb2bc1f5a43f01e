"""Generate the synthetic VTU-style syllabus PDFs shipped in ``corpus/``.

Why this exists: the real syllabi we evaluate against may not be redistributed, so the product ships
two syllabi of our own that exercise the same chunker paths: "Module-N" and "Unit-I" headings with
their hours on the heading line, a module that crosses an explicit page break (so a chunk must cite a
page span), numbered course outcomes, textbooks and reference books.

Run ``python corpus/make_syllabi.py`` (needs the dev-only ``fpdf2``). Output is byte-for-byte
reproducible: the creation date is fixed and layout uses only the built-in Helvetica font.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

HERE = Path(__file__).resolve().parent
FIXED_DATE = datetime(2024, 6, 1, tzinfo=UTC)  # fixed so reruns produce identical bytes
UNIVERSITY = "Kestrel Technological University - synthetic sample syllabus (not a real course)"
PAGE_BREAK = "<page-break>"  # marker inside a module's topics: start a new page here


@dataclass(frozen=True)
class Module:
    """One module/unit: its hours, topic paragraphs ("Lead: text"), and the textbook chapters."""

    hours: int
    topics: tuple[str, ...]
    textbook: str
    teaching: str
    lab: tuple[str, ...] = ()


@dataclass(frozen=True)
class Course:
    """Everything printed in one syllabus; ``breaks_before`` names sections that start a new page."""

    filename: str
    semester: str
    title: str
    code: str
    credits: int
    cie: int
    see: int
    ltps: str
    pedagogy_hours: str
    heading: str  # "module" -> Module-1..5, "unit" -> Unit-I..V
    objectives: tuple[str, ...]
    modules: tuple[Module, ...]
    outcomes: tuple[str, ...]
    textbooks: tuple[str, ...]
    references: tuple[str, ...]
    weblinks: tuple[str, ...]
    activities: tuple[str, ...]
    breaks_before: frozenset[str] = field(default_factory=frozenset)


ROMAN = ("I", "II", "III", "IV", "V")

TEACHING_GENERAL = (
    "These are suggested strategies that teachers may use to help students reach the course outcomes. "
    "Lectures may be mixed with demonstrations, short videos, group work and problem-based learning; "
    "every module should include at least one worked real-world example and open-ended questions that "
    "ask students to compare approaches rather than recall definitions."
)

ASSESSMENT_CIE = (
    "Continuous Internal Evaluation (CIE) and the Semester End Examination (SEE) carry equal weight. "
    "To pass, a student needs at least 40% of the CIE maximum, at least 35% of the SEE maximum, and at "
    "least 40% of the combined total. CIE consists of two internal tests of 25 marks each, held after "
    "about half and about ninety per cent of the syllabus, plus two assignments or a seminar for 25 "
    "marks; the total is scaled down to the CIE maximum."
)

ASSESSMENT_SEE = (
    "The SEE is a three-hour written paper set by the University with ten questions of 20 marks each, two "
    "from every module or unit. Students answer five full questions, choosing one from each module or "
    "unit, and the marks are scaled down to the SEE maximum."
)

CLOUD = Course(
    filename="KC21CS47-cloud-computing.pdf",
    semester="IV Semester",
    title="CLOUD COMPUTING",
    code="21CS47",
    credits=3,
    cie=50,
    see=50,
    ltps="3:0:0:0",
    pedagogy_hours="40",
    heading="module",
    objectives=(
        "Explain the distributed-systems technologies that cloud computing is built on.",
        "Describe virtualisation and compare the architectures of common hypervisors.",
        "Compare the IaaS, PaaS and SaaS service models offered by public cloud platforms.",
        "Write data-parallel programs using the MapReduce model and the Hadoop ecosystem.",
        "Identify security threats in multi-tenant clouds and the controls that address them.",
    ),
    modules=(
        Module(
            hours=8,
            topics=(
                "Distributed System Models and Enabling Technologies: Scalable computing over the "
                "Internet, technologies for network-based systems, clusters of cooperative computers, "
                "grid computing infrastructures, peer-to-peer network families, performance, security "
                "and energy efficiency of distributed systems.",
                "Introduction to Cloud Computing: The NIST definition of cloud computing and its five "
                "essential characteristics (on-demand self-service, broad network access, resource "
                "pooling, rapid elasticity, measured service); deployment models - public, private, "
                "community and hybrid clouds; utility computing and the pay-per-use model.",
            ),
            textbook="Textbook 1: Chapter 1; Textbook 2: Chapter 1",
            teaching="Chalk and board, case study of a public cloud region",
        ),
        Module(
            hours=8,
            topics=(
                "Virtual Machines and Virtualisation: Implementation levels of virtualisation "
                "(instruction set architecture, hardware abstraction, operating system, library and "
                "application level), virtualisation structures and tools.",
                PAGE_BREAK,
                "Hypervisors: Virtual machine monitors, Type-1 (bare-metal) and Type-2 (hosted) "
                "hypervisors, the Xen architecture, KVM, full virtualisation with binary translation, "
                "para-virtualisation, hardware-assisted virtualisation (Intel VT-x, AMD-V).",
                "Virtualisation of CPU, Memory and I/O Devices: Shadow page tables, I/O device "
                "emulation, live migration of virtual machines, operating-system-level virtualisation "
                "and containers (Docker).",
            ),
            textbook="Textbook 1: Chapter 3",
            teaching="Demonstration of creating and migrating a virtual machine",
        ),
        Module(
            hours=8,
            topics=(
                "Cloud Service Models: Infrastructure as a Service (IaaS), Platform as a Service "
                "(PaaS) and Software as a Service (SaaS), who manages which layer of the stack, "
                "Function as a Service and serverless computing.",
                "Public Cloud Platforms: Amazon Web Services - EC2 instances, S3 object storage and "
                "Elastic Block Store; Google App Engine; Microsoft Azure; service-level agreements "
                "(SLAs), metering and billing of cloud resources.",
            ),
            textbook="Textbook 1: Chapter 4; Textbook 2: Chapters 3, 9",
            teaching="Hands-on walk-through of a free-tier cloud console",
        ),
        Module(
            hours=8,
            topics=(
                "Cloud Programming Models: Data-parallel programming, the MapReduce model - map, "
                "shuffle and reduce phases, combiners and partitioners, word count and inverted index "
                "examples.",
                "Hadoop Ecosystem: Hadoop Distributed File System (HDFS) - NameNode, DataNodes and "
                "block replication; YARN resource management; Apache Spark and resilient distributed "
                "datasets (RDDs); Pig and Hive for large-scale data processing.",
            ),
            textbook="Textbook 1: Chapter 6; Textbook 2: Chapter 8",
            teaching="Problem-based learning with a single-node Hadoop cluster",
        ),
        Module(
            hours=8,
            topics=(
                "Cloud Security: The shared responsibility model, security challenges of "
                "multi-tenancy, virtual machine escape and side-channel attacks, denial-of-service "
                "attacks on cloud services, data loss and vendor lock-in.",
                "Securing Cloud Data and Identity: Identity and access management (IAM), encryption of "
                "data at rest and in transit, key management services, trust models, security audit "
                "and compliance (ISO 27001, SOC 2), cloud forensics.",
            ),
            textbook="Textbook 1: Chapter 4 (Section 4.5); Textbook 2: Chapter 11",
            teaching="Case studies of published cloud security incidents",
        ),
    ),
    outcomes=(
        "Explain distributed computing technologies and the essential characteristics of cloud computing.",
        "Describe virtualisation techniques and compare hypervisor architectures.",
        "Select a suitable service model and public cloud platform for a given application.",
        "Develop data-parallel applications using MapReduce and Hadoop.",
        "Analyse security threats in the cloud and apply identity, encryption and audit controls.",
    ),
    textbooks=(
        "Kai Hwang, Geoffrey C. Fox and Jack J. Dongarra, Distributed and Cloud Computing: From "
        "Parallel Processing to the Internet of Things, Morgan Kaufmann, 2012.",
        "Rajkumar Buyya, Christian Vecchiola and S. Thamarai Selvi, Mastering Cloud Computing, "
        "McGraw Hill Education, 2013.",
    ),
    references=(
        "Thomas Erl, Zaigham Mahmood and Ricardo Puttini, Cloud Computing: Concepts, Technology and "
        "Architecture, Pearson, 2013.",
        "Tom White, Hadoop: The Definitive Guide, 4th Edition, O'Reilly, 2015.",
        "Ronald L. Krutz and Russell Dean Vines, Cloud Security: A Comprehensive Guide to Secure Cloud "
        "Computing, Wiley, 2010.",
    ),
    weblinks=(
        "NPTEL online course: Cloud Computing (video lectures).",
        "Apache Hadoop project documentation and getting-started guides.",
    ),
    activities=(
        "Deploy a small web application on a free-tier cloud account and measure its response time.",
        "Run a word-count job on a single-node Hadoop cluster and explain each phase of its output.",
    ),
    breaks_before=frozenset({"module-5", "resources"}),
)

ML = Course(
    filename="KCAI205-machine-learning.pdf",
    semester="II Semester",
    title="MACHINE LEARNING",
    code="22AI205",
    credits=4,
    cie=50,
    see=50,
    ltps="3:0:2:0",
    pedagogy_hours="40 T + 20 P",
    heading="unit",
    objectives=(
        "Introduce the vocabulary of supervised and unsupervised learning.",
        "Fit and regularise regression models and evaluate them on held-out data.",
        "Build tree-based, margin-based and neural classifiers and compare them.",
        "Discover structure in unlabelled data with clustering and dimensionality reduction.",
    ),
    modules=(
        Module(
            hours=8,
            topics=(
                "Introduction: Well-posed learning problems, supervised and unsupervised learning, "
                "training, validation and test sets, cross-validation, the bias-variance trade-off.",
                "Regression: Simple and multiple linear regression, the least-squares cost function, "
                "batch and stochastic gradient descent, polynomial regression, regularisation with "
                "ridge and lasso, logistic regression with the sigmoid function and cross-entropy "
                "loss.",
            ),
            textbook="Textbook 1: Chapters 2, 4",
            teaching="Chalk and board, live coding in a notebook",
            lab=("Implement linear regression with batch gradient descent and plot the cost per epoch.",),
        ),
        Module(
            hours=8,
            topics=(
                "Decision Trees: Decision tree representation, the ID3 algorithm, entropy and "
                "information gain, the Gini index and the CART algorithm, overfitting and pruning, "
                "handling continuous attributes and missing values.",
                "Ensemble Learning: Bagging, random forests and feature importance, boosting and "
                "AdaBoost, gradient boosted trees, voting classifiers.",
            ),
            textbook="Textbook 1: Chapters 6, 7",
            teaching="Problem-based learning: grow a tree by hand on a small data set",
            lab=("Build an ID3 decision tree for a weather data set and classify a new sample.",),
        ),
        Module(
            hours=8,
            topics=(
                "Support Vector Machines: Linear classifiers and the maximum-margin hyperplane, "
                "support vectors, primal and dual formulations, soft-margin SVM and the hinge loss.",
                PAGE_BREAK,
                "Kernel Methods: The kernel trick, polynomial, radial basis function (RBF) and sigmoid "
                "kernels, Mercer's condition, sequential minimal optimisation (SMO), multi-class SVM "
                "(one-versus-rest and one-versus-one), support vector regression.",
            ),
            textbook="Textbook 1: Chapter 5; Textbook 2: Chapter 7",
            teaching="Visual demonstration of margins and kernels",
            lab=("Train an SVM with an RBF kernel and tune C and gamma by grid search.",),
        ),
        Module(
            hours=8,
            topics=(
                "Clustering: Distance and similarity measures, k-means clustering and choosing k with "
                "the elbow method, k-medoids, hierarchical agglomerative clustering and dendrograms, "
                "density-based clustering with DBSCAN.",
                "Mixture Models and Dimensionality Reduction: Gaussian mixture models and the "
                "expectation-maximisation (EM) algorithm, principal component analysis (PCA).",
            ),
            textbook="Textbook 1: Chapters 8, 9; Textbook 2: Chapter 9",
            teaching="Group activity: cluster the class's own survey data",
            lab=("Cluster a customer data set with k-means and with DBSCAN and compare the results.",),
        ),
        Module(
            hours=8,
            topics=(
                "Artificial Neural Networks: The perceptron and its learning rule, multilayer "
                "perceptrons, activation functions (sigmoid, tanh, ReLU), the backpropagation "
                "algorithm, softmax output and cross-entropy.",
                "Training Deep Networks: Vanishing gradients, weight initialisation, dropout, batch "
                "normalisation, an introduction to convolutional neural networks.",
            ),
            textbook="Textbook 1: Chapters 10, 11; Textbook 2: Chapter 5",
            teaching="Live coding of backpropagation with a small network",
            lab=("Implement a two-layer neural network with backpropagation for handwritten digits.",),
        ),
    ),
    outcomes=(
        "Formulate a learning problem and fit regression models using gradient descent and regularisation.",
        "Build decision trees and ensemble classifiers and evaluate them on held-out data.",
        "Apply support vector machines with suitable kernels to classification problems.",
        "Group unlabelled data with clustering and reduce its dimensionality with PCA.",
        "Design and train multilayer neural networks using backpropagation.",
    ),
    textbooks=(
        "Aurelien Geron, Hands-On Machine Learning with Scikit-Learn, Keras and TensorFlow, 3rd "
        "Edition, O'Reilly, 2022.",
        "Christopher M. Bishop, Pattern Recognition and Machine Learning, Springer, 2006.",
    ),
    references=(
        "Ethem Alpaydin, Introduction to Machine Learning, 4th Edition, MIT Press, 2020.",
        "Kevin P. Murphy, Machine Learning: A Probabilistic Perspective, MIT Press, 2012.",
        "Trevor Hastie, Robert Tibshirani and Jerome Friedman, The Elements of Statistical Learning, "
        "2nd Edition, Springer, 2009.",
    ),
    weblinks=(
        "NPTEL online course: Introduction to Machine Learning (video lectures).",
        "scikit-learn user guide: supervised and unsupervised learning.",
    ),
    activities=("Kaggle-style mini competition on a public tabular data set, judged on held-out accuracy.",),
    breaks_before=frozenset({"module-2", "outcomes"}),
)

COURSES: tuple[Course, ...] = (CLOUD, ML)


class SyllabusPDF(FPDF):
    """FPDF with the running header and footer every page of a syllabus carries."""

    def header(self) -> None:
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 5, UNIVERSITY, align="C", new_x="LMARGIN", new_y="NEXT")
        self.ln(2)

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 5, f"Page {self.page_no()} of {{nb}}", align="C")


def _heading_label(course: Course, index: int) -> str:
    """'Module-3' or 'Unit-III': the two heading styles the chunker must recognise."""
    return f"Module-{index + 1}" if course.heading == "module" else f"Unit-{ROMAN[index]}"


def _section(pdf: FPDF, title: str) -> None:
    pdf.ln(2)
    pdf.set_font("Helvetica", "B", 11)
    pdf.cell(0, 6, title, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)


def _para(pdf: FPDF, text: str) -> None:
    """A paragraph whose "Lead:" prefix is bold, as in printed VTU syllabi."""
    lead, sep, rest = text.partition(": ")
    body = f"**{lead}:** {rest}" if sep and len(lead) < 60 else text
    pdf.multi_cell(0, 5, body, markdown=True, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(1)


def _numbered(pdf: FPDF, prefix: str, items: Sequence[str]) -> None:
    for number, item in enumerate(items, 1):
        pdf.multi_cell(0, 5, f"{prefix}{number}. {item}", new_x="LMARGIN", new_y="NEXT")


def _course_table(pdf: FPDF, course: Course) -> None:
    rows = (
        ("Course Code", course.code, "CIE Marks", str(course.cie)),
        ("Teaching Hours/Week (L:T:P:S)", course.ltps, "SEE Marks", str(course.see)),
        ("Total Hours of Pedagogy", course.pedagogy_hours, "Total Marks", str(course.cie + course.see)),
        ("Credits", f"{course.credits:02d}", "Exam Hours", "03"),
    )
    widths = (62, 38, 45, 45)
    pdf.set_font("Helvetica", "", 10)
    for row in rows:
        for width, text in zip(widths, row, strict=True):
            pdf.cell(width, 7, text, border=1)
        pdf.ln(7)


def _module(pdf: FPDF, course: Course, index: int, module: Module) -> None:
    pdf.ln(2)
    pdf.set_font("Helvetica", "B", 11)
    pdf.cell(120, 7, _heading_label(course, index), border="LTB")
    pdf.cell(0, 7, f"{module.hours} Hours", border="RTB", align="R", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    pdf.ln(1)
    for topic in module.topics:
        if topic == PAGE_BREAK:
            pdf.add_page()
            continue
        _para(pdf, topic)
    pdf.set_font("Helvetica", "I", 10)
    pdf.multi_cell(0, 5, module.textbook, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    if module.lab:
        pdf.multi_cell(0, 5, "Laboratory Component:", new_x="LMARGIN", new_y="NEXT")
        _numbered(pdf, "", module.lab)
    pdf.multi_cell(0, 5, f"Teaching-Learning Process: {module.teaching}", new_x="LMARGIN", new_y="NEXT")


def render(course: Course) -> bytes:
    """Lay out one syllabus; explicit page breaks make the page of every section predictable."""
    pdf = SyllabusPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(f"{course.code} {course.title.title()} - synthetic syllabus")
    pdf.set_author("Syllabot sample corpus")
    pdf.set_creator("corpus/make_syllabi.py")
    pdf.set_producer("fpdf2")
    pdf.set_auto_page_break(auto=True, margin=16)
    pdf.set_margins(15, 12, 15)
    pdf.add_page()

    pdf.set_font("Helvetica", "", 10)
    pdf.cell(0, 6, course.semester, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "B", 14)
    pdf.cell(0, 8, course.title, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    _course_table(pdf, course)

    _section(pdf, "Course Objectives:")
    _numbered(pdf, "CLO ", course.objectives)
    _section(pdf, "Teaching-Learning Process (General Instructions)")
    pdf.multi_cell(0, 5, TEACHING_GENERAL, new_x="LMARGIN", new_y="NEXT")

    for index, module in enumerate(course.modules):
        if f"module-{index + 1}" in course.breaks_before:
            pdf.add_page()
        _module(pdf, course, index, module)

    if "outcomes" in course.breaks_before:
        pdf.add_page()
    _section(pdf, "Course Outcomes (Course Skill Set)")
    pdf.multi_cell(
        0, 5, "At the end of the course the student will be able to:", new_x="LMARGIN", new_y="NEXT"
    )
    _numbered(pdf, "CO", course.outcomes)

    _section(pdf, "Assessment Details (both CIE and SEE)")
    pdf.multi_cell(
        0,
        5,
        f"CIE Marks: {course.cie}. SEE Marks: {course.see}. " + ASSESSMENT_CIE,
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.ln(1)
    pdf.multi_cell(0, 5, ASSESSMENT_SEE, new_x="LMARGIN", new_y="NEXT")

    if "resources" in course.breaks_before:
        pdf.add_page()
    _section(pdf, "Suggested Learning Resources:")
    _section(pdf, "Textbooks")
    _numbered(pdf, "", course.textbooks)
    _section(pdf, "Reference Books")
    _numbered(pdf, "", course.references)
    _section(pdf, "Weblinks and Video Lectures (e-Resources)")
    _numbered(pdf, "", course.weblinks)
    _section(pdf, "Activity Based Learning (Suggested Activities in Class)")
    _numbered(pdf, "", course.activities)
    return bytes(pdf.output())


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Write every syllabus PDF into ``--out`` (default: this folder) and return the paths."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: corpus/)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for course in COURSES:
        path = args.out / course.filename
        path.write_bytes(render(course))
        written.append(path)
        print(f"wrote {path}")
    return written


if __name__ == "__main__":
    main()
