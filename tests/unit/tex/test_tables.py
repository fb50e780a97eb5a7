"""The bundled preamble builds each matrix's and table's column template once per document
and reuses it; every table still comes out exactly as the array package alone sets it.

A behaviour across modules, not one module's tests (pipeline.build, tex)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.tex import run as tex

# the same letters as math and as text cells, repeats, p-columns with >{...}, a column
# type redefined between two tables, a *{count} template whose count changes, and a matrix
# wider than amsmath's default ten columns once MaxMatrixCols allows it, and the answer
# grid's long tables of fixed-width columns (the same template twice)
BODY = r"""\begin{document}
\newcounter{wscols}\setcounter{wscols}{2}
$\begin{bmatrix} 0.18 & 0.82 \\ 0.50 & 0.50 \end{bmatrix}
 \begin{bmatrix} 1 & 2 & 3 \end{bmatrix}
 \begin{bmatrix} x_1 & x_2 \\ y_1 & y_2 \end{bmatrix}$
\begin{tabular}{cc} ab & cd \\ 1 & 2 \end{tabular}
$\begin{array}{cc} ab & cd \\ 1 & 2 \end{array}$
\begin{tabular}{@{}l@{\hspace{1.2em}}>{\raggedright\arraybackslash}p{0.3\textwidth}@{}}
\textit{correct} & a long enough cell that it has to wrap onto a second line here \\
no-scale & short
\end{tabular}
\begin{tabular}{@{}l@{\hspace{1.2em}}>{\raggedright\arraybackslash}p{0.3\textwidth}@{}}
again & the same template, a second time
\end{tabular}

\newcolumntype{Y}{>{\bfseries}c}\begin{tabular}{|Y|Y|} bold & cells \end{tabular}
\newcolumntype{Y}{>{\itshape}c}\begin{tabular}{|Y|Y|} italic & cells \end{tabular}
\begin{tabular}{*{\value{wscols}}{c}} two & columns \end{tabular}
\setcounter{wscols}{3}\begin{tabular}{*{\value{wscols}}{c}} now & three & columns \end{tabular}
\setcounter{MaxMatrixCols}{12}
$\begin{bmatrix} 1 & 2 & 3 & 4 & 5 & 6 & 7 & 8 & 9 & 10 & 11 \end{bmatrix}$
{\footnotesize\begin{longtable}[l]{@{}w{l}{40pt}>{\ttfamily}w{l}{30pt}|w{r}{20pt}w{c}{12pt}@{}}
\multicolumn{2}{@{}l}{} & \multicolumn{2}{|>{\centering\arraybackslash}p{38pt}}{(a) $A$}\\
sheet & code & 11 & 12\\ \hline\endhead
Ada & AB-C & $0.25$ & \textbf{b}\\
\end{longtable}}
{\footnotesize\begin{longtable}[l]{@{}w{l}{40pt}>{\ttfamily}w{l}{30pt}|w{r}{20pt}w{c}{12pt}@{}}
sheet & code & 11 & 12\\ \hline\endhead
Bob & DE-F & $-\infty$ & \textbf{a}\\
\end{longtable}}
\clearpage\makeatletter ws-array:\csname ver@array.sty\endcsname
  :\ifdefined\ws@template cached\else built\fi:\makeatother
\end{document}
"""


@pytest.fixture(scope="module")
def preamble(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("built")
    build(BuildOptions(seed=42, out=str(out), pdf=False))
    [sheet] = out.glob("*/sheet.tex")
    return sheet.read_text(encoding="utf-8").split("\\begin{document}")[0]


def _pages(pdf: bytes, folder: Path) -> list[bytes]:
    folder.mkdir()
    (folder / "doc.pdf").write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", "100", "-png", "doc.pdf", "page"], cwd=folder, check=True)
    return [p.read_bytes() for p in sorted(folder.glob("page*.png"))]


@needs_tex
def test_tables_set_from_reused_templates_look_exactly_as_the_array_package_sets_them(
    preamble, tmp_path
):
    switched_off = preamble.replace(
        "\\expandafter\\ifx\\csname ver@array.sty\\endcsname\\ws@arraychecked", "\\iffalse"
    )
    assert switched_off != preamble
    runs = {}
    for name, head in (("cached", preamble), ("plain", switched_off)):
        pdf = tex.compile_job(tex.TexJob("doc", head + BODY), tmp_path / name).pdf
        pages = _pages(pdf, tmp_path / f"{name}-pages")
        (tmp_path / f"{name}.pdf").write_bytes(pdf)
        said = subprocess.run(
            ["pdftotext", "-f", str(len(pages)), f"{name}.pdf", "-"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        runs[name] = (pages[:-1], re.search(r"ws-array:(.*):(\w+):", said))
    assert len(runs["cached"][0]) == 1 and runs["cached"][0] == runs["plain"][0]
    cached, plain = runs["cached"][1], runs["plain"][1]
    assert cached is not None and plain is not None and plain.group(2) == "built"
    checked = "2022/09/04 v2.5g Tabular extension package (FMi)"
    assert cached.group(2) == ("cached" if cached.group(1) == checked else "built")


# what the bundled preamble's lean bmatrix, smallmatrix, \[ \] and environment hooks must set
# exactly as amsmath, array and LaTeX do: spacing options, nested and wide matrices, a
# display after \par, in a list and followed by text, and a hook of one's own
EDGES = r"""\begin{document}
Text before $\begin{bmatrix} 1 & -\infty \\[4pt] 0.25 & \frac{1}{2} \\* x & y \end{bmatrix}$
and $\left[\begin{smallmatrix} 0.18 & 0.82 \\[3pt] 0.50 & 0.50 \end{smallmatrix}\right]$.
\[ A = \begin{bmatrix} \begin{bmatrix} 1 & 2 \end{bmatrix} & 3 \end{bmatrix} \]
{\renewcommand{\arraystretch}{1.5}$\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}$}
\par
\[ S = \begin{bmatrix} 1 & 2 & 3 & 4 & 5 & 6 & 7 & 8 \end{bmatrix} \]
followed by text.
\begin{enumerate}\setlength{\itemsep}{1pt}
\item A step\[ e^{\tilde S} \approx \begin{bmatrix} 1.00 & 4.48 \end{bmatrix} \]
\item Another\[ \left(5.48,\ 8.96\right) \]
\end{enumerate}
\begin{center}centred\end{center}
\begin{tabular}{r|c|c|} & a & b \\ \cline{2-3}
\footnotesize q 1 & \hbox to 1.7cm{\hss\wsblank{9mm}\hss} & x \\ \cline{2-3}
\end{tabular}
\AddToHook{env/center/begin}{[hooked]}\begin{center}with a hook\end{center}
\end{document}
"""


@needs_tex
@pytest.mark.parametrize("body", ["edges", "key"])
def test_the_lean_matrices_displays_and_environments_set_the_very_same_pages(
    preamble, body, tmp_path
):
    switched_off = preamble.replace("\\ifx\\fmtversion\\ws@latexchecked", "\\iffalse").replace(
        "\\expandafter\\ifx\\csname ver@amsmath.sty\\endcsname\\ws@amsmathchecked", "\\iffalse"
    )
    assert switched_off.count("\\iffalse") >= preamble.count("\\iffalse") + 2
    if body == "edges":
        text = EDGES
    else:  # a whole bundled key: worked solutions, fingerprint tables, choices
        out = tmp_path / "built"
        build(BuildOptions(seed=7, out=str(out), pdf=False))
        [key] = out.glob("*/key.tex")
        text = "\\begin{document}" + key.read_text("utf-8").split("\\begin{document}", 1)[1]
    pages = {}
    for name, head in (("lean", preamble), ("plain", switched_off)):
        pdf = tex.compile_job(tex.TexJob("doc", head + text), tmp_path / name).pdf
        pages[name] = _pages(pdf, tmp_path / f"{name}-pages")
    assert len(pages["lean"]) >= 1 and pages["lean"] == pages["plain"]
