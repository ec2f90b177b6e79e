"""Office Math (OMML, ``m:oMath``) to LaTeX.

Why: Word stores equations as a tree of fractions, scripts, radicals, n-ary operators,
delimiters and matrices. Markdown and HTML writers want LaTeX, so each OMML construct maps to
its LaTeX form; text runs are escaped and common Unicode symbols become LaTeX commands.
"""
# ruff: noqa: RUF001  (tables of Unicode symbols and localized names)

from __future__ import annotations

from lxml import etree

M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_M = f"{{{M}}}"
_W = f"{{{W}}}"

SYMBOLS: dict[str, str] = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\epsilon",
    "ϵ": r"\epsilon", "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ϑ": r"\vartheta",
    "ι": r"\iota", "κ": r"\kappa", "λ": r"\lambda", "μ": r"\mu", "ν": r"\nu", "ξ": r"\xi",
    "π": r"\pi", "ϖ": r"\varpi", "ρ": r"\rho", "ϱ": r"\varrho", "σ": r"\sigma",
    "ς": r"\varsigma", "τ": r"\tau", "υ": r"\upsilon", "φ": r"\phi", "ϕ": r"\phi",
    "χ": r"\chi", "ψ": r"\psi", "ω": r"\omega", "Γ": r"\Gamma", "Δ": r"\Delta",
    "Θ": r"\Theta", "Λ": r"\Lambda", "Ξ": r"\Xi", "Π": r"\Pi", "Σ": r"\Sigma",
    "Υ": r"\Upsilon", "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega",
    "∞": r"\infty", "±": r"\pm", "∓": r"\mp", "×": r"\times", "÷": r"\div", "⋅": r"\cdot",
    "·": r"\cdot", "∙": r"\cdot", "≤": r"\leq", "≥": r"\geq", "≠": r"\neq", "≈": r"\approx",
    "≡": r"\equiv", "∼": r"\sim", "≅": r"\cong", "∝": r"\propto", "→": r"\rightarrow",
    "←": r"\leftarrow", "↔": r"\leftrightarrow", "⇒": r"\Rightarrow", "⇐": r"\Leftarrow",
    "⇔": r"\Leftrightarrow", "↦": r"\mapsto", "∈": r"\in", "∉": r"\notin", "∋": r"\ni",
    "⊂": r"\subset", "⊃": r"\supset", "⊆": r"\subseteq", "⊇": r"\supseteq", "∪": r"\cup",
    "∩": r"\cap", "∅": r"\emptyset", "∀": r"\forall", "∃": r"\exists", "¬": r"\neg",
    "∧": r"\wedge", "∨": r"\vee", "∂": r"\partial", "∇": r"\nabla", "…": r"\ldots",
    "⋯": r"\cdots", "⋮": r"\vdots", "⋱": r"\ddots", "°": r"^{\circ}", "′": "'", "″": "''",
    "∑": r"\sum", "∏": r"\prod", "∐": r"\coprod", "∫": r"\int", "∬": r"\iint",
    "∭": r"\iiint", "∮": r"\oint", "⋃": r"\bigcup", "⋂": r"\bigcap", "⨁": r"\bigoplus",
    "⨂": r"\bigotimes", "⊕": r"\oplus", "⊗": r"\otimes", "ℝ": r"\mathbb{R}",
    "ℕ": r"\mathbb{N}", "ℤ": r"\mathbb{Z}", "ℚ": r"\mathbb{Q}", "ℂ": r"\mathbb{C}",
    "ℏ": r"\hbar", "ℓ": r"\ell", "√": r"\surd", "∠": r"\angle", "⊥": r"\perp",
    "∥": r"\parallel", "〈": r"\langle", "〉": r"\rangle", "⟨": r"\langle", "⟩": r"\rangle",
    "⌈": r"\lceil", "⌉": r"\rceil", "⌊": r"\lfloor", "⌋": r"\rfloor", "−": "-", "–": "-",
    "—": "-", "∗": "*", "≪": r"\ll", "≫": r"\gg", "∘": r"\circ", "†": r"\dagger",
    "\u2061": "", "\u2062": "", "\u2063": "", "\u200b": "", "\u00a0": " ",
}
_ESCAPES = {"{": r"\{", "}": r"\}", "#": r"\#", "%": r"\%", "&": r"\&", "$": r"\$",
            "_": r"\_", "\\": r"\backslash ", "~": r"\sim "}
FUNCTIONS = {"sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "coth",
             "arcsin", "arccos", "arctan", "log", "ln", "lg", "exp", "lim", "liminf", "limsup",
             "max", "min", "sup", "inf", "det", "dim", "ker", "gcd", "deg", "arg", "hom", "Pr"}
ACCENTS = {"\u0302": r"\hat", "\u0303": r"\tilde", "\u0305": r"\bar", "\u00af": r"\bar",
           "\u0304": r"\bar", "\u0307": r"\dot", "\u0308": r"\ddot", "\u20db": r"\dddot",
           "\u20d7": r"\vec", "\u030c": r"\check", "\u0306": r"\breve", "\u0301": r"\acute",
           "\u0300": r"\grave", "\u02c6": r"\hat", "~": r"\tilde", "^": r"\hat",
           "\u2192": r"\vec", "\u20d6": r"\overleftarrow", "\u0311": r"\breve"}
DELIMS = {"(": "(", ")": ")", "[": "[", "]": "]", "{": r"\{", "}": r"\}", "|": "|",
          "‖": r"\|", "⟨": r"\langle", "⟩": r"\rangle", "〈": r"\langle", "〉": r"\rangle",
          "⌈": r"\lceil", "⌉": r"\rceil", "⌊": r"\lfloor", "⌋": r"\rfloor", "": "."}


def escape_text(text: str) -> str:
    """Escape a math run's text for LaTeX and map Unicode symbols to commands."""
    out: list[str] = []
    for ch in text:
        if ch in SYMBOLS:
            cmd = SYMBOLS[ch]
            out.append(cmd + " " if cmd.startswith("\\") and cmd[-1].isalpha() else cmd)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        else:
            out.append(ch)
    return "".join(out)


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _ns(el: etree._Element) -> str:
    return etree.QName(el).namespace or "" if isinstance(el.tag, str) else ""


def _prop(el: etree._Element | None, pr: str, name: str) -> str | None:
    """Value of ``m:<pr>/m:<name>/@m:val`` under ``el``."""
    if el is None:
        return None
    p = el.find(f"{_M}{pr}/{_M}{name}")
    if p is None:
        return None
    val: str = p.get(_M + "val", "")  # lxml attribute values are str
    return val


def _child(el: etree._Element, name: str) -> etree._Element | None:
    return el.find(_M + name)


def _group(tex: str) -> str:
    tex = tex.strip()
    return "{" + tex + "}"


def _conv(el: etree._Element | None) -> str:
    """LaTeX of the children of ``el`` (an argument such as m:e, m:num)."""
    if el is None:
        return ""
    return "".join(_node(c) for c in el)


def _delim(ch: str | None, default: str) -> str:
    ch = default if ch is None else ch
    return DELIMS.get(ch, escape_text(ch))


def _node(el: etree._Element) -> str:
    if not isinstance(el.tag, str):
        return ""
    ns, name = _ns(el), _local(el)
    if ns == W:
        if name == "r":
            return escape_text("".join(t.text or "" for t in el.iter(_W + "t")))
        return _conv(el) if name in ("ins", "smartTag", "sdt", "sdtContent") else ""
    if ns != M:
        return ""
    if name.endswith("Pr") or name in ("ctrlPr",):
        return ""
    if name == "r":
        text = "".join(t.text or "" for t in el.iter(_M + "t"))
        normal = el.find(f"{_M}rPr/{_M}nor") is not None
        if normal and text.strip():
            return r"\text{" + text.replace("\\", r"\textbackslash ").replace(
                "{", r"\{").replace("}", r"\}") + "}"
        stripped = text.strip()
        if stripped in FUNCTIONS and stripped == text:
            return "\\" + stripped + " "
        return escape_text(text)
    if name == "oMathPara":
        parts = [_node(c) for c in el if _local(c) == "oMath"]
        return r" \\ ".join(p for p in parts if p)
    if name in ("oMath", "e", "num", "den", "sub", "sup", "deg", "fName", "lim", "box",
                "phant", "argPr"):
        return _conv(el)
    if name == "f":
        num, den = _conv(_child(el, "num")), _conv(_child(el, "den"))
        ftype = _prop(el, "fPr", "type")
        if ftype == "lin":
            return f"{num}/{den}"
        if ftype == "noBar":
            return r"\genfrac{}{}{0pt}{}" + _group(num) + _group(den)
        if ftype == "skw":
            return r"{}^{" + num + r"}/_{" + den + "}"
        return r"\frac" + _group(num) + _group(den)
    if name == "sSup":
        return _base(_child(el, "e")) + "^" + _group(_conv(_child(el, "sup")))
    if name == "sSub":
        return _base(_child(el, "e")) + "_" + _group(_conv(_child(el, "sub")))
    if name == "sSubSup":
        return (_base(_child(el, "e")) + "_" + _group(_conv(_child(el, "sub"))) + "^"
                + _group(_conv(_child(el, "sup"))))
    if name == "sPre":
        return ("{}_" + _group(_conv(_child(el, "sub"))) + "^" + _group(_conv(_child(el, "sup")))
                + _base(_child(el, "e")))
    if name == "rad":
        hide = _prop(el, "radPr", "degHide")
        deg = _conv(_child(el, "deg")).strip()
        body = _group(_conv(_child(el, "e")))
        if deg and hide not in ("1", "on", "true"):
            return r"\sqrt[" + deg + "]" + body
        return r"\sqrt" + body
    if name == "nary":
        chr_ = _prop(el, "naryPr", "chr")
        op = SYMBOLS.get(chr_ or "∫", escape_text(chr_ or "")) if chr_ != "" else r"\int"
        sub = _conv(_child(el, "sub")).strip()
        sup = _conv(_child(el, "sup")).strip()
        out = op
        if sub and _prop(el, "naryPr", "subHide") not in ("1", "on", "true"):
            out += "_" + _group(sub)
        if sup and _prop(el, "naryPr", "supHide") not in ("1", "on", "true"):
            out += "^" + _group(sup)
        return out + _group(_conv(_child(el, "e")))
    if name == "func":
        fname_el = _child(el, "fName")
        fname = _conv(fname_el).strip()
        raw = "".join(t.text or "" for t in fname_el.iter(_M + "t")) if fname_el is not None else ""
        if raw.strip() in FUNCTIONS and fname.rstrip() == "\\" + raw.strip():
            fname = "\\" + raw.strip()
        elif raw.strip().isalpha() and fname == escape_text(raw).strip():
            fname = r"\operatorname{" + raw.strip() + "}"
        arg = _conv(_child(el, "e")).strip()
        return fname + _group(arg) if not arg.startswith(r"\left") else fname + arg
    if name == "d":
        beg = _delim(_prop(el, "dPr", "begChr"), "(")
        end = _delim(_prop(el, "dPr", "endChr"), ")")
        sep_raw = _prop(el, "dPr", "sepChr")
        sep = _delim(sep_raw, "|") if sep_raw != "" else ""
        items = [_conv(e) for e in el.findall(_M + "e")]
        inner = (" " + sep + " ").join(items) if sep else "".join(items)
        return r"\left" + beg + inner + r"\right" + end
    if name == "m":
        rows = []
        for mr in el.findall(_M + "mr"):
            rows.append(" & ".join(_conv(e).strip() for e in mr.findall(_M + "e")))
        return r"\begin{matrix}" + r" \\ ".join(rows) + r"\end{matrix}"
    if name == "eqArr":
        rows = [_conv(e).strip() for e in el.findall(_M + "e")]
        if len(rows) == 1:
            return rows[0]
        return r"\begin{array}{l}" + r" \\ ".join(rows) + r"\end{array}"
    if name == "acc":
        chr_ = _prop(el, "accPr", "chr")
        cmd = ACCENTS.get(chr_ if chr_ is not None else "\u0302", r"\hat")
        return cmd + _group(_conv(_child(el, "e")))
    if name == "bar":
        pos = _prop(el, "barPr", "pos") or "bot"
        cmd = r"\overline" if pos == "top" else r"\underline"
        return cmd + _group(_conv(_child(el, "e")))
    if name == "borderBox":
        return r"\boxed" + _group(_conv(_child(el, "e")))
    if name == "groupChr":
        chr_ = _prop(el, "groupChrPr", "chr") or "\u23df"
        pos = _prop(el, "groupChrPr", "pos") or "bot"
        body = _group(_conv(_child(el, "e")))
        if chr_ in ("\u23de", "\u23b4") or (pos == "top" and chr_ not in ("\u23df",)):
            return r"\overbrace" + body
        if chr_ in ("\u2192", "\u2190"):
            return (r"\overrightarrow" if chr_ == "\u2192" else r"\overleftarrow") + body
        return r"\underbrace" + body
    if name == "limLow":
        base_el = _child(el, "e")
        base = _conv(base_el).strip()
        lim = _conv(_child(el, "lim")).strip()
        if base.startswith("\\") and base.rstrip("{} ").lstrip("\\") in FUNCTIONS:
            return base.rstrip() + "_" + _group(lim)
        if base.startswith((r"\underbrace", r"\overbrace")):
            return base + "_" + _group(lim)
        return r"\underset" + _group(lim) + _group(base)
    if name == "limUpp":
        base = _conv(_child(el, "e")).strip()
        lim = _conv(_child(el, "lim")).strip()
        if base.startswith(r"\overbrace"):
            return base + "^" + _group(lim)
        return r"\overset" + _group(lim) + _group(base)
    # unknown construct: keep its content
    return _conv(el)


def _base(el: etree._Element | None) -> str:
    tex = _conv(el).strip()
    if len(tex) <= 1 or tex.startswith(r"\left") or (tex.startswith("\\") and tex[1:].isalpha()):
        return tex
    return "{" + tex + "}"


def _tidy(tex: str) -> str:
    out = " ".join(tex.split())
    return out.replace("{ ", "{").replace(" }", "}").strip()


def omml_to_latex(element: etree._Element) -> str:
    """LaTeX source of an ``m:oMath`` or ``m:oMathPara`` element (without ``$`` delimiters)."""
    try:
        return _tidy(_node(element))
    except RecursionError:
        return ""
