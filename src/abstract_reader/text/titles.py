"""Stand-in titles for abstracts that have none, and making them distinct; titles as read
(``shown_title``: BibTeX case-protection braces dropped)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .render import strip_markup_fast

TITLE_MAX = 80

_INTRO_RE = re.compile(
    r"\b(?:[Ww]e|[Tt]his (?:paper|work)|[Oo]ur (?:work|paper)|and)\s+"
    r"(?:(?:also|further|then|first|next|therefore|thus)\s+)?"
    r"(?:introduce|propose|present|develop|release|build|design|construct|contribute|"
    r"introduces|proposes|presents|develops)\s+(?P<rest>[^.;]{3,400})"
)
_CALLED_RE = re.compile(
    r"\b(?:called|termed|dubbed|named|coined|we call|which we call)\s+"
    r"(?P<name>(?:\*\*|\*|\\text(?:bf|it|sc)\{)?[A-Za-z0-9$\\][^,;.()]{0,60}?"
    r"(?:\s*\([A-Za-z0-9-]{2,12}\))?)(?=[,;.:]|\s+(?:that|which|to|for|with|as)\b|$)"
)
_ACRONYM_DEF_RE = re.compile(
    r"^(?P<long>(?:[A-Z0-9][\w'’-]*|of|and|for|the|via|in|on|with|to|a|-)"
    r"(?:\s+(?:[A-Z0-9][\w'’-]*|of|and|for|the|via|in|on|with|to|a|-))*)"
    r"\s*\((?P<short>[A-Za-z0-9][\w±+-]{0,15})\)"
)
_NAME_RE = re.compile(
    r"^(?P<name>[^\s,;:()]*[A-Z0-9][^\s,;:()]*(?:\s+v\d+(?:\.\d+)*)?)(?P<after>.*)$", re.DOTALL
)
_ARTICLE_RE = re.compile(
    r"^(?:(?:the|a|an|our)\s+)?(?:(?:new|novel|first|simple|general|practical|unified)\s+)*", re.I
)
_TITLE_CASE_RE = re.compile(
    r"^(?P<name>[A-Z][\w'’-]*(?:\s+(?:[A-Z0-9][\w'’-]*|of|and|for|the|via|in|on))+)"
)
_CLEAN_RE = re.compile(r"\*\*|\*|\\text(?:bf|it|sc|tt|rm)\{([^{}]*)\}")
_PAREN_RE = re.compile(r"\s*\([^()]*\)")
_RELATIVE_RE = re.compile(r"(?:which|that|where|whose)\b")
#: A colon ends a clause only before a space: not in "https://", "10:30", "1:2"; nor after
#: "e.g." (`_first_clause` steps over that one).
_CLAUSE_RE = re.compile(r",\s|;\s|:\s|\s--\s|\s—\s|—")
_SEP_COLON_RE = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bcf\.):(?:\s|$)")
_ABBREVIATED = ("e.g.", "i.e.", "cf.")
_DESC_STOP_RE = re.compile(r"\s+(?:that|which|where|whose|to|by|as|designed|capable|able)\b")
_NAME_END_RE = re.compile(r"^\s*(?:$|[,(;:]|(?:that|which|to|for|with|as|is|was|a|an|in)\b)")
#: A URL, with a preposition that leads to it ("code at https://…"); its "https:" is no
#: "Name: description" colon.
_URL_RE = re.compile(
    r"(?:\s+(?:at|from|via|on|in|see|under|to))?\s*\(?\b(?:(?:https?|ftp)(?:://|$)|www\.)\S*",
    re.I,
)


def _before_url(text: str) -> str:
    """``text`` up to a URL and the preposition that leads to it: a URL ends a title (also
    a bare "https" where a regex stopped at the URL's colon)."""
    if "://" in text or "www." in text or text.endswith(("http", "https", "ftp")):
        return _URL_RE.split(text, maxsplit=1)[0]
    return text


_LEAD_IN = {"in", "on", "when", "although", "while", "as", "despite", "given", "for", "since", "if"}
_STOPWORD_END = {
    "a",
    "an",
    "the",
    "of",
    "and",
    "or",
    "for",
    "to",
    "in",
    "on",
    "with",
    "via",
    "by",
    "as",
    "through",
    "under",
    "across",
    "from",
    "between",
    "into",
    "within",
    "at",
}


def _clean(fragment: str) -> str:
    if "*" in fragment or "\\" in fragment:
        fragment = _CLEAN_RE.sub(_unwrap, fragment)
    return " ".join(fragment.split())


def _unwrap(match: re.Match[str]) -> str:
    return match.group(1) or ""


#: Words that start a phrase: a title cut before one ends on a whole phrase.
_PHRASE_STARTS = {
    "for", "of", "in", "on", "with", "via", "under", "through", "across", "from", "between",
    "into", "within", "over", "without", "at", "by", "as", "to", "and", "or", "but", "that",
    "which", "where", "while", "whose", "when", "using", "based", "rather", "than",
}  # fmt: skip


def shorten(text: str, limit: int = TITLE_MAX) -> str:
    """At most ``limit`` characters of whole words, ending on a whole phrase, no "…".

    Too long: keep the words that fit, then end before the last word that starts a phrase
    ("for", "that", "and" …) when that keeps at least three words; never a dangling
    article or preposition. One enormous word is cut (there is nothing whole to keep).
    """
    text = " ".join(text[: limit * 4].split()).strip(" ,;:-")  # only the start can be kept
    if len(text) <= limit:
        return text
    space = text.rfind(" ", 0, limit + 1)  # the words before it are those that fit
    if space < 0:  # one enormous word
        return text[:limit]
    kept = text[:space].split(" ")
    # the last word from the fourth on that starts a phrase (not after "due", "such"),
    # before a preposition or relative word rather than inside "A and B"
    cut = conjunction = 0
    for i in range(len(kept) - 1, 2, -1):
        word = kept[i].lower()
        if word in _PHRASE_STARTS and kept[i - 1].lower() not in ("due", "such"):
            if word not in ("and", "or", "but"):
                cut = i
                break
            conjunction = conjunction or i
    cut = cut or conjunction
    if cut:
        kept = kept[:cut]
    while len(kept) > 1 and kept[-1].lower().strip(",;:") in _DANGLING:
        kept.pop()
    return " ".join(kept).rstrip(" ,;:-")


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _description(after: str) -> str:
    """The appositive after a name: ``, a scalable framework that …`` → ``scalable framework``."""
    after = after.lstrip()
    if not after.startswith(","):
        return ""
    desc = _before_url(after[1:]).strip()
    desc = _ARTICLE_RE.sub("", desc)
    stop = _DESC_STOP_RE.search(desc)
    if stop:
        desc = desc[: stop.start()]
    if _RELATIVE_RE.match(desc):
        return ""
    parts = desc.split(",")
    head = parts[0]
    if len(head.split()) == 1 and len(parts) > 1:  # "training-free, single-pass framework"
        head = f"{head},{parts[1]}"
    desc = _PAREN_RE.sub("", head).strip()
    return _trim_description(desc)


#: Words that start a trailing clause of a description ("… dataset built from …").
_CLAUSE_STARTERS = {
    "built", "spanning", "including", "using", "covering", "containing",
    "consisting", "comprising", "drawn", "collected", "derived", "targeting", "featuring",
}  # fmt: skip


_PREPOSITIONS = {
    "for",
    "of",
    "in",
    "on",
    "with",
    "via",
    "under",
    "through",
    "across",
    "from",
    "between",
    "into",
    "within",
    "over",
    "without",
    "at",
    "by",
    "as",
}
_KEEP_ED = {"based", "guided", "aligned", "informed"}  # "… based on trees" says what it is


def _trim_description(desc: str) -> str:
    """Keep the head of a description: stop before a trailing participle clause (from the
    fourth word on), at most eight words, no dangling preposition; '' if under two words."""
    words = desc.split()
    for i, word in enumerate(words):
        bare = word.lower().strip(",.;:")
        participle = bare.endswith("ed") and len(bare) > 4 and bare not in _KEEP_ED
        # "… of cited web sources": after a preposition or article it is an adjective
        participle = participle and words[i - 1].lower() not in _ADJECTIVE_AFTER
        if i >= 3 and (bare in _CLAUSE_STARTERS or participle):
            words = words[:i]
            break
    if len(words) > 12:  # too long: end before the last preposition that leaves 3 words
        words = words[:12]
        cut = max((i for i in range(3, 12) if words[i].lower() in _PREPOSITIONS), default=0)
        if cut:
            words = words[:cut]
        ands = [i for i in range(3, len(words)) if words[i].lower() in ("and", "or")]
        if ands and ands[-1] >= len(words) - 3:  # "… the feature set and the level": a torso
            words = words[: ands[-1]]
    while words and words[-1].lower() in _STOPWORD_END:
        words.pop()
    return " ".join(words) if len(words) >= 2 else ""


_EXPANSION_RE = re.compile(r"^\s*\((?P<long>[^()]{5,90})\)")


def _named(fragment: str) -> str | None:
    """A title from what follows 'we introduce …', when it names something."""
    fragment = _ARTICLE_RE.sub("", _clean(fragment.strip()))
    acronym = _ACRONYM_DEF_RE.match(fragment)
    if acronym and any(ch.isupper() for ch in acronym.group("short")):
        long_name = acronym.group("long").strip()
        if len(long_name.split()) >= 2 and long_name[:1].isupper():
            return f"{acronym.group('short')}: {long_name}"
    phrase = _TITLE_CASE_RE.match(fragment)
    if (
        phrase
        and phrase.group("name").split()[-1][:1].isupper()
        and _NAME_END_RE.match(fragment[phrase.end() :])
    ):
        desc = _description(fragment[phrase.end() :])
        return f"{phrase.group('name')}: {_capitalise(desc)}" if desc else phrase.group("name")
    name = _NAME_RE.match(fragment)
    if name:
        expansion = _EXPANSION_RE.match(name.group("after"))
        if expansion and name.group("name")[:1].isupper():
            long_name = _clean(expansion.group("long"))
            if len(long_name.split()) >= 2 and sum(w[:1].isupper() for w in long_name.split()) >= 2:
                return f"{name.group('name')}: {long_name}"
    if name and _NAME_END_RE.match(name.group("after")):
        token = name.group("name").strip("$")
        first_upper = token[:1].isupper() or token[:1].isdigit()
        inner_upper = any(ch.isupper() for ch in token[1:]) or "-" in token
        if first_upper and (inner_upper or len(token) >= 4) and not token.isdigit():
            desc = _description(name.group("after"))
            return f"{token}: {_capitalise(desc)}" if desc else token
    return None


_INTRO_VERBS = (
    "introduce",
    "propose",
    "present",
    "develop",
    "release",
    "build",
    "design",
    "construct",
    "contribute",
)
_CALLED_WORDS = ("called", "termed", "dubbed", "named", "coined", "we call")
_ABBREVIATIONS = ("et al", "e.g", "i.e", "cf", "vs", "approx", "resp")


_SUBJECT_RE = re.compile(
    r"(?:\bwe|\bthis (?:paper|work)|\bour (?:work|paper))\s+"
    r"(?:(?:also|further|then|first|next|therefore|thus)\s+)?$"
)


def _we_before(lowered: str, i: int) -> bool:
    """Is "we" the subject of the sentence around ``i`` ("we do A and propose B")?"""
    start = lowered.rfind(". ", max(0, i - 200), i) + 1
    return " we " in f" {lowered[start:i]}"


def _intro_starts(head: str, lowered: str) -> list[int]:
    """Where 'we propose …'-like phrases start, found with str.find (no regex scan)."""
    starts: list[int] = []
    for verb in _INTRO_VERBS:
        i = lowered.find(verb)
        while i >= 0:
            window = lowered[max(0, i - 40) : i]
            subject = _SUBJECT_RE.search(window)
            if subject is not None:
                starts.append(i - len(window) + subject.start())
            elif window.endswith(" and ") and _we_before(lowered, i):
                starts.append(i - 4)  # "we gain insight … and propose X"
            i = lowered.find(verb, i + 1)
    return sorted(starts)


def _contribution(intro: list[re.Match[str]]) -> str:
    """What 'we propose …' introduces when it has no name: "a unified framework for robust
    domain generalization under …" → "Unified framework for robust domain generalization"."""
    for match in intro:
        desc = _ARTICLE_RE.sub("", _clean(_before_url(match.group("rest"))))
        desc = _PAREN_RE.sub("", desc)
        stop = _DESC_STOP_RE.search(desc)
        if stop:
            desc = desc[: stop.start()]
        desc = desc.split(",")[0]
        if ":" in desc:  # "X: Y" → X, but "a 1:2 scheme" stays whole
            desc = _SEP_COLON_RE.split(desc, maxsplit=1)[0]
        desc = _trim_description(desc)
        if len(desc.split()) >= 3 and not desc.lower().startswith(_VAGUE_STARTS):
            return _capitalise(desc)
    return ""


#: Contributions too vague to stand as a title ("a method that …", "two lessons …").
_VAGUE_STARTS = (
    "to ",
    "on ",
    "in ",
    "method",
    "approach",
    "way",
    "technique",
    "set of",
    "series of",
    "number of",
    "analysis",
    "study",
    "theory",
    "formal model",
    "simple",
    "first",
    "question",
    "problem",
)


def _first_clause(sentence: str) -> str:
    """The sentence up to its first ", ", "; ", ": ", " -- " or dash (`_CLAUSE_RE`)."""
    marks = [i for i in map(sentence.find, ",;:—-") if i >= 0]  # where a match can be
    if not marks:
        return sentence
    match = _CLAUSE_RE.search(sentence, max(0, min(marks) - 1))  # "\s--": a space first
    while match and sentence.endswith(_ABBREVIATED, 0, match.start()) and match[0][0] == ":":
        match = _CLAUSE_RE.search(sentence, match.end())  # "e.g.: X" goes on
    return sentence[: match.start()] if match else sentence


def _first_sentence(head: str) -> str:
    pos = 0
    while True:
        i = head.find(".", pos)
        if i < 0:
            return head
        after = head[i + 1 : i + 2]
        before = head[max(0, i - 6) : i].lower()
        if (
            (not after or after.isspace())
            and not head[i - 1 : i].isupper()
            and not before.endswith(_ABBREVIATIONS)
        ):
            return head[:i]
        pos = i + 1


_ARTICLES = {"a", "an", "the"}
_DANGLING = frozenset(_STOPWORD_END | _PHRASE_STARTS)  # never the last word of a title
_ADJECTIVE_AFTER = frozenset(_PREPOSITIONS | _ARTICLES)


#: "Linked Paper One: Testing URLs …": the paragraph starts with its own title.
_LEADING_RE = re.compile(r"\s*(?P<name>[A-Z0-9][^:.;,?!()\n]{2,120}?):\s+\S")
_TITLE_SMALL = frozenset(_ARTICLES | _PREPOSITIONS | {"and", "or", "to", "vs"})
_HEADINGS = ("abstract", "background", "motivation", "objective", "purpose", "context",
             "summary", "introduction", "aims", "goal", "method", "result", "conclusion",
             "keywords", "note", "update", "highlights", "tl;dr")  # fmt: skip


def _leading_title(head: str) -> str:
    """The "Name" of a paragraph that starts "Name: …" when Name reads as a title: two to
    twelve words, each capitalised (or a digit, or a small word such as "of" after the
    first), not a heading ("Background: …"). '' otherwise."""
    if head.find(": ", 0, 130) < 0:
        return ""
    match = _LEADING_RE.match(head)
    if match is None:
        return ""
    name = match.group("name")
    words = name.split()
    if not 2 <= len(words) <= 12 or name.lower().startswith(_HEADINGS):
        return ""
    for i, word in enumerate(words):
        if not (word[:1].isupper() or word[:1].isdigit() or (i and word in _TITLE_SMALL)):
            return ""
    return shorten(_clean(strip_markup_fast(name)))


def derive_title(source: str) -> str:
    """A short stand-in title for an abstract with no title (the source is sanitised text).

    Prefers a title the paragraph starts with ("Title Case Name: …"); then the method,
    benchmark or framework that the abstract introduces; else the first clause of its first
    sentence. A URL is never part of a title, and its colon never separates one. At most ``TITLE_MAX`` characters, never cut mid-word.
    Cheap enough for 100,000 abstracts: plain substring checks gate every regex.
    """
    head = source[:1500]
    named = _leading_title(head)
    if named:
        return named
    lowered = head.lower()
    cues = _subject_cues(head, lowered)
    intro = [m for start in cues.intro if (m := _INTRO_RE.match(head, start)) is not None]
    for match in intro:
        rest = match.group("rest")
        title = _named(rest)
        if title is None and any(word in rest for word in _CALLED_WORDS):
            called = _CALLED_RE.search(rest)
            if called:
                name = _before_url(called.group("name"))
                title = _named(name) or _capitalise(_clean(name))
                before = _trim_description(_ARTICLE_RE.sub("", _clean(rest[: called.start()])))
                if title and ":" not in title and before:  # "a 3D completion framework, called X"
                    title = f"{title}: {_capitalise(before.rstrip(','))}"
        if title:
            return shorten(strip_markup_fast(title))
    contribution = _contribution(intro)
    called_from, realized_from = _ed_cues(head, lowered, cues.we_call)
    if called_from >= 0:
        called = _CALLED_RE.search(head, called_from)
        if called:
            title = _named(_before_url(called.group("name")))
            if title:
                return shorten(strip_markup_fast(title))
    if contribution:
        return shorten(strip_markup_fast(contribution))
    named = _named_in_passing(head, realized_from)
    if named:
        return named
    if " we " in lowered or "this paper" in lowered or "our " in lowered or lowered[:3] == "we ":
        what = _what_it_does(head, lowered, cues.what)
        if what:
            return what
    sentence = _first_sentence(head)
    clause = _first_clause(sentence)
    lead_in = clause.split(" ", 1)[0].lower() in _LEAD_IN
    if len(clause.split()) < 4 or lead_in:  # too short, or only a lead-in
        clause = sentence
    plain = _clean(strip_markup_fast(_before_url(clause)))
    return shorten(plain) or "(empty abstract)"


_SUBJECT = (
    r"(?:\b[Ww]e|\b[Tt]his (?:paper|work)|\b[Oo]ur (?:paper|work))\s+"
    r"(?:(?:also|further|then|first|next|critically|formally|jointly|systematically|"
    r"therefore|thus|here)\s+)?"
)
#: "We give X": X is what the paper makes.
_MAKES_RE = re.compile(
    _SUBJECT + r"(?:give|gives|publish|publishes|establish|establishes|derive|derives)\s+"
    r"(?P<rest>[^.;:?]{8,}(?::(?=\S)[^.;:?]*)*)"
)
#: "Our main finding is that X": X is the claim.
_FINDING_RE = re.compile(
    r"\b[Oo]ur (?:main |key |central )?(?:finding|result|insight|message) is that\s+"
    r"(?P<rest>[^.;:?]{8,}(?::(?=\S)[^.;:?]*)*)"
)
#: "We study X", "We consider the problem of X": X is the topic.
_STUDIES_RE = re.compile(
    _SUBJECT + r"(?:consider|considers|study|studies|investigate|investigates|address|"
    r"addresses|tackle|tackles|initiate|initiates)\s+(?P<rest>[^.;:?]{8,}(?::(?=\S)[^.;:?]*)*)"
)
#: "We argue that X": X is the claim.
_CLAIMS_RE = re.compile(
    _SUBJECT + r"(?:argue|argues|find|finds|found|show|shows|showed|demonstrate|"
    r"demonstrates)\s+that\s+(?P<rest>[^.;:?]{8,}(?::(?=\S)[^.;:?]*)*)"
)
#: "This paper rethinks X": "Rethinking X".
_DOES_RE = re.compile(
    _SUBJECT + r"(?P<verb>rethinks?|formali[sz]es?|characteri[sz]es?|evaluates?|benchmarks?|"
    r"revisits?|analy[sz]e[sd]?|examines?|quantif(?:y|ies)|critically evaluates?)\s+"
    r"(?P<rest>[^.;:?]{8,}(?::(?=\S)[^.;:?]*)*)"
)
_TOPIC_LEAD_RE = re.compile(
    r"^(?:the (?:problem|question|task|setting) of |a (?:new |novel |formal |systematic |"
    r"large-scale |empirical |comprehensive )*(?:study|analysis|evaluation|investigation) of |"
    r"(?:a|an|the) )",
    re.I,
)
_BY_MAKING_RE = re.compile(r"\bby (?:introducing|proposing|developing|designing)\s+")
_TITLE_STOP_RE = re.compile(
    r",\s|\s\(|\s(?:—|–|--)\s|\s(?:that|which|whose|where|while|so that|in which|by|"
    r"rather than|such that|because|thereby|when|and (?:show|prove|find|derive|demonstrate|"
    r"propose|introduce|evaluate|use|establish|provide))\b"
)
_PRONOUNS = {"they", "it", "we", "this", "these", "our", "its", "their", "he", "she"}
_DEMONSTRATIVES = {"this", "these", "such", "those", "therefore", "thus", "also"}


def _gerund(verb: str) -> str:
    verb = verb.lower()
    if verb.endswith("ies"):
        verb = verb[:-3] + "y"
    elif verb.endswith("ed") or (verb.endswith("s") and not verb.endswith("ss")):
        verb = verb[:-1]  # "analyzed" → "analyze", "rethinks" → "rethink"
    if verb.endswith("e") and not verb.endswith("ee"):
        verb = verb[:-1]
    return verb.capitalize() + "ing"


def _phrase(rest: str, lead: str = "") -> str:
    """A title from what follows a contribution verb: its first phrase, whole words."""
    if "$" in rest or "\\" in rest:  # math makes a poor title
        return ""
    rest = _clean(strip_markup_fast(_before_url(rest)))
    by = _BY_MAKING_RE.search(rest)
    if by:  # "we formalize this objective by introducing a new paradigm for X"
        rest, lead = rest[by.end() :], ""
    rest = _TOPIC_LEAD_RE.sub("", rest.strip())
    stop = _TITLE_STOP_RE.search(rest)
    if stop:
        rest = rest[: stop.start()]
    words: list[str] = []
    for word in rest.split():
        if word.lower() in _DEMONSTRATIVES:
            if words and word.lower() in ("this", "these", "those", "such"):
                words.append("the")  # "on this benchmark" → "on the benchmark"
            continue
        words.append(word)
    if lead:
        words.insert(0, lead)
    while words and words[-1].lower().strip(",;:") in _DANGLING:
        words.pop()
    if len(words) < 3 or words[0].lower() in _PRONOUNS or words[-2].lower() in _ARTICLES:
        return ""  # "They …", "… of a small" (cut inside a noun phrase)
    return _capitalise(shorten(" ".join(words)))


#: "This view is realized in Resolution-Aware … Clustering (RSDP)": the paper's own thing.
_REALIZED_RE = re.compile(
    r"\b(?:realized|implemented|instantiated|embodied|materialized|culminat\w+) (?:in|as|by|into)"
    r" (?:the |a |an |our )?(?P<rest>[A-Z](?:[^.;:]|:(?=\S)){5,120})"
)
#: "the resulting method, Rescaled ASGD, converges": a name given in an apposition.
#: "… motivate LoHi, a training-free framework": a coined name (a capital inside).
_COINED_RE = re.compile(r"[A-Z][a-z]+[A-Z][\w-]*")
_APPOSITION_RE = re.compile(
    r"\b(?:method|algorithm|framework|approach|model|system|scheme|estimator|procedure),\s+"
    r"(?P<name>[A-Z][\w-]*(?:\s+[A-Z0-9][\w-]*){0,3}),"
)


def _named_in_passing(head: str, realized_from: int) -> str:
    """A name the abstract gives its contribution without "we propose" ("realized in X (X)",
    "the resulting method, X,"); a name needs a capital inside it (``ASGD``, ``LoHi``).
    ``realized_from``: where `_REALIZED_RE` can first match (-1: nowhere)."""
    if realized_from >= 0:
        for match in _REALIZED_RE.finditer(head, realized_from):
            title = _named(match.group("rest"))
            if title:
                return shorten(strip_markup_fast(title))
    a_commas: list[int] = []
    an_commas: list[int] = []
    nouns: list[int] = []
    spaced_noun = False
    for match in _COMMA_CUES_RE.finditer(head):  # one pass finds the commas that matter
        comma = match.start()
        if head.endswith(_APPOSITION_WORDS, 0, comma):
            nouns.append(comma)
            spaced_noun = spaced_noun or head.startswith(" ", comma + 1)
        if head.startswith(" a ", comma + 1):
            a_commas.append(comma)
        elif head.startswith(" an ", comma + 1):
            an_commas.append(comma)
    if spaced_noun:  # "method, " somewhere; the regex can match from the first noun on
        for match in _APPOSITION_RE.finditer(head, max(0, nouns[0] - 9)):
            name = match.group("name")
            if any(ch.isupper() for word in name.split() for ch in word[1:]):
                return shorten(strip_markup_fast(name))
    for comma in a_commas + an_commas:  # "LoHi, a …": the word before an apposition
        word = head[head.rfind(" ", 0, comma) + 1 : comma]
        if word[1:].islower() or not _COINED_RE.fullmatch(word):
            continue
        if head.count(word) >= 3:  # used throughout: the paper's own name
            desc = _description(head[comma : comma + 200])
            return shorten(f"{word}: {_capitalise(desc)}" if desc else word)
    return ""


_WHAT_PATTERNS = (_MAKES_RE, _FINDING_RE, _STUDIES_RE, _CLAIMS_RE, _DOES_RE)


@functools.cache
def _any_what_re() -> re.Pattern[str]:
    """Matches where any of them does: one cheap test per subject rules most of them out.
    Made at its first use (compiling it is ~2.5 ms, a tenth of this module's import)."""
    return re.compile(
        "|".join(f"(?:{re.sub(r'[(][?]P<[a-z]+>', '(?:', p.pattern)})" for p in _WHAT_PATTERNS)
    )


def _what_it_does(head: str, lowered: str, starts: list[int] | None) -> str:
    """When nothing is named: what the paper gives, finds, studies or does, as a phrase.

    Tried in that order, each on the first sentence that yields at least three words:
    "we give adversarially robust ANN algorithms with …" → "Adversarially robust ANN
    algorithms with sublinear query time"; "Our main finding is that X" → "X"; "we
    consider the problem of X" → "X"; "we argue that X" → "X"; "this paper rethinks X" →
    "Rethinking X". Each is tried where "we ", "this paper", "this work" or "our " starts:
    ``starts`` (found by `_subject_cues`) or, if None, found here.
    """
    if starts is None:
        subjects = [
            i for s in ("we ", "this paper", "this work", "our ") for i in _find_all(lowered, s)
        ]
        starts = [i for i in sorted(subjects) if _any_what_re().match(head, i)]
    for pattern in _WHAT_PATTERNS:
        for start in starts:
            match = pattern.match(head, start)
            if match is None:
                continue
            verb = match.groupdict().get("verb")
            title = _phrase(match.group("rest")[:300], _gerund(verb) if verb else "")
            if title and not title.lower().startswith(_VAGUE_STARTS):
                return title
    return ""


# ---------------------------------------------------------------------------------------
# Finding the cues: where each of the regexes above can match, in a few passes over the text
# ---------------------------------------------------------------------------------------


#: "ed" then a space, after a word that names or realises something: one regex pass finds
#: every "called X" and "realized in X" cue.
_ED_CUES_RE = re.compile(
    r"ed(?=\s)(?:(?<=called)|(?<=termed)|(?<=dubbed)|(?<=named)|(?<=coined)|(?<=realized)"
    r"|(?<=implemented)|(?<=instantiated)|(?<=embodied))"
)
_CALLED_ED = ("called", "termed", "dubbed", "named", "coined")
#: A comma after a noun that can take a name in apposition, or before " a " / " an ".
_COMMA_CUES_RE = re.compile(
    r",(?:(?<=method,)|(?<=algorithm,)|(?<=framework,)|(?<=approach,)|(?<=model,)"
    r"|(?<=system,)|(?<=scheme,)|(?<=estimator,)|(?<=procedure,)|(?= an? ))"
)
_APPOSITION_WORDS = ("method", "algorithm", "framework", "approach", "model", "system",
                     "scheme", "estimator", "procedure")  # fmt: skip
_ADVERBS = ("also", "further", "then", "first", "next", "therefore", "thus")
_ODD_ASCII_SPACES = ("\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def _find_all(text: str, needle: str) -> list[int]:
    found: list[int] = []
    i = text.find(needle)
    while i >= 0:
        found.append(i)
        i = text.find(needle, i + 1)
    return found


def _plain_spaces(head: str) -> bool:
    """No whitespace but plain spaces (``\\s`` then means " ")."""
    if head.isascii():
        return not any(space in head for space in _ODD_ASCII_SPACES)
    return head.isprintable()


def _ed_cues(head: str, lowered: str, we_call: int) -> tuple[int, int]:
    """Where `_CALLED_RE` and `_REALIZED_RE` can first match in ``head`` (-1: nowhere).

    Each bound is at or before the first possible match: "which we call" starts 6 before
    "we call" (at ``we_call`` in ``lowered``); the longest "…ed " word, "instantiated", has
    12 characters.
    """
    called: list[int] = []
    realized: list[int] = []
    for match in _ED_CUES_RE.finditer(head):
        end = match.end()
        if head.endswith(_CALLED_ED, 0, end):
            called.append(end - 6)
        elif head.startswith(" ", end):  # "realized ", "implemented " …
            realized.append(end - 12)
    if we_call >= 0:  # and "which we call"; a position in lowered is one in head if as long
        called.append(we_call - 6 if len(lowered) == len(head) else 0)
    culminating = head.find("culminat")
    if culminating >= 0:
        realized.append(culminating)
    materialized = head.find("materialized") if realized else -1
    if materialized >= 0:  # not a cue, but tried once the regex runs: it may come first
        realized.append(materialized)
    return (
        max(0, min(called)) if called else -1,
        max(0, min(realized)) if realized else -1,
    )


@dataclass(slots=True)
class _SubjectCues:
    intro: list[int]  # where "we propose …"-like phrases start (for _INTRO_RE)
    what: list[int] | None  # where _what_it_does's patterns may match (None: not known)
    we_call: int  # where "we call" is in the lowered text (-1: nowhere)


_INTRO_VERB_ALT = "|".join(_INTRO_VERBS)
_ADVERB_ALT = "|".join(_ADVERBS)
#: After a subject: spaces, maybe an adverb and spaces, then an intro verb, where the empty
#: group "verb" is; or, looking ahead, a verb of _what_it_does's patterns (at most one word
#: after the subject); or "call" after "we". A regex per subject, each starting with a
#: literal, which the regex engine skips to as fast as str.find.
_INTRO_NEXT = rf" +(?:(?:{_ADVERB_ALT}) +)?(?P<verb>)(?={_INTRO_VERB_ALT})"
_WHAT_VERBS = (
    r"(?:give|publish|establish|derive|consider|stud(?:y|ies)|investigate|address|tackle|"
    r"initiate|argue|find|found|show|demonstrate|rethink|formali[sz]e|characteri[sz]e|"
    r"evaluate|benchmark|revisit|analy[sz]e|examine|quantif(?:y|ies)|critically)"
)
_WHAT_NEXT = rf"(?=\s+(?:\w+\s+)?{_WHAT_VERBS})(?P<what>)"
_SUBJECT_CUE_RES = (
    re.compile(rf"we(?:{_INTRO_NEXT}|(?= call\s)(?P<call>)|{_WHAT_NEXT})"),
    re.compile(rf"this (?:paper|work)(?:{_INTRO_NEXT}|{_WHAT_NEXT})"),
    re.compile(
        rf"our (?:(?:work|paper)(?:{_INTRO_NEXT}|{_WHAT_NEXT})|(?=(?:main |key |central )?"
        r"(?:finding|result|insight|message) is that)(?P<finding>))"
    ),
)
#: " and " then an intro verb; the regex starts with "and " (a literal first character
#: that is not a space is found much faster).
_AND_INTRO_RE = re.compile(rf"and (?<= and )(?={_INTRO_VERB_ALT})")


def _subject_cues(head: str, lowered: str) -> _SubjectCues:
    """Where the subjects ("we", "this paper", "our work" …) start what the title regexes look
    for, in a few regex passes over the lowered text; `_intro_starts` when the text has
    whitespace other than plain spaces.

    Intro: a subject, spaces, maybe an adverb and spaces, then an intro verb; or " and "
    then a verb when "we" is the subject of the sentence. Where the verb is at ``k``,
    `_intro_starts` looked for the subject in ``lowered[max(0, k - 40):k]``, so that is
    where it must be. _what_it_does: its patterns match where "we ", "this paper", "this
    work" or "our " start; the regexes find a superset (any one word as the adverb) that
    is only usable if a position in ``lowered`` is the same position in ``head``.
    """
    if not _plain_spaces(head):
        return _SubjectCues(_intro_starts(head, lowered), None, lowered.find("we call"))
    intro: list[int] = []
    what: list[int] = []
    we_call = -1
    for cue in _SUBJECT_CUE_RES:
        for match in cue.finditer(lowered):
            i, k = match.start(), match.start("verb")
            if k < 0:  # not an intro verb: "we call", or one of _what_it_does's verbs
                if "call" in cue.groupindex and match.group("call") is not None:
                    we_call = i if we_call < 0 else we_call
                else:
                    what.append(i)
            elif i >= k - 40 and (
                i == max(0, k - 40) or not (lowered[i - 1].isalnum() or lowered[i - 1] == "_")
            ):  # in the 40 characters before the verb, a word of its own (not "owe ")
                intro.append(i)
    if "we " in lowered:
        for match in _AND_INTRO_RE.finditer(lowered):
            if _we_before(lowered, match.end()):
                intro.append(match.start())  # "we gain insight … and propose X"
    intro.sort()
    what.sort()
    return _SubjectCues(intro, what if len(lowered) == len(head) else None, we_call)


def disambiguate(titles: list[str], keys: list[str]) -> list[str]:
    """Make titles distinct: a clash gets more words of its first sentence, then its id.

    Deterministic whatever the order of the input: clashes are resolved in ``keys`` order.
    """
    result = list(titles)
    groups: dict[str, list[int]] = {}
    for i, title in enumerate(result):
        groups.setdefault(title.casefold(), []).append(i)
    taken = set(groups)
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: keys[i])
        for i in members[1:]:
            base = result[i].rstrip("…")
            suffix = f" [{keys[i][:6]}]"
            candidate = shorten(base, TITLE_MAX - len(suffix)) + suffix
            n = 7
            while candidate.casefold() in taken and n <= len(keys[i]):
                suffix = f" [{keys[i][:n]}]"
                candidate = shorten(base, TITLE_MAX - len(suffix)) + suffix
                n += 1
            result[i] = candidate
            taken.add(candidate.casefold())
    return result


#: ``$…$`` in a title: math, whose braces are LaTeX's (the same spans ``cite`` keeps in BibTeX)
_TITLE_MATH = re.compile(r"(?<!\\)\$[^$]+?(?<!\\)\$")
_TITLE_BRACE = re.compile(r"\\.|[{}]", re.S)


def unbrace(title: str, before: str = "", after: str = "") -> str:
    """``title`` without its BibTeX grouping braces: each outermost ``{…}`` outside ``$…$``
    math becomes ``before`` + its text + ``after`` (inner braces dropped). Only when those
    braces balance, as BibTeX output treats them as the user's grouping then (``{GAN}``,
    ``{Gaussian}``); otherwise they are characters of the title and it is returned as it
    is. Math and backslash escapes (``\\{``) are kept."""
    if "{" not in title:
        return title
    out: list[str] = []
    depth = 0
    pos = 0
    spans = [(m.start(), m.end()) for m in _TITLE_MATH.finditer(title)]
    spans.append((len(title), len(title)))
    for start, end in spans:
        for match in _TITLE_BRACE.finditer(title, pos, start):
            out.append(title[pos : match.start()])
            brace = match.group()
            if brace == "{":
                depth += 1
                out.append(before if depth == 1 else "")
            elif brace == "}":
                depth -= 1
                if depth < 0:
                    return title
                out.append(after if depth == 0 else "")
            else:  # an escape: kept as written
                out.append(brace)
            pos = match.end()
        out.append(title[pos:end])
        pos = end
    return title if depth else "".join(out)


def shown_title(title: str) -> str:
    """The title as the reader, ``list``, ``show`` and every citation but BibTeX show it:
    ``Sparkle: A Dataset for {GAN} Background`` → ``… for GAN Background``. What is stored
    (and BibTeX, where the braces keep the capitals) is unchanged."""
    return unbrace(title)


def display_title(title: str) -> str:
    """The title as the reader draws it, in the list and the paper view alike:
    `shown_title`, with its math and LaTeX rendered (``$k$-input`` → ``k-input``, as text
    and Markdown citations give it). Only a title with a ``$`` or a backslash is rendered
    (and `render` memoises it): the list draws rows for a million papers, and most titles
    have neither."""
    shown = unbrace(title)
    if "$" not in shown and "\\" not in shown:
        return shown
    from .render import render

    return " ".join(render(shown).text.split())
