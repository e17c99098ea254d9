"""Readability checker for memory texts (stdlib only).

A memory is meant to be read cold, out of its conversation, by a model that
never saw the chat. `problems(text)` returns the list of reasons a memory text
fails that test; an empty list means it looks readable. Each reason is one of:

  dangling_pronoun      first word is a pronoun with no antecedent
                        ("It …", "That …", "They …", "This …")
  user_verb_agreement   "User am/are/were/have/do …" (third-person subject
                        "User" with a first/second-person verb form)
  vocative              a name addressed directly: ", Caroline." / ", Tom!"
                        at the end, or "Hey Tom," at the start
  interjection_lead     starts with "Good news,", "Wow,", "Haha", "lol",
                        "Omg", "Yeah,", "Oh,", "Well,", "So," …
  first_person_left     a first-person word (I, me, my, mine, I'm, I've,
                        myself, we, our, us …) in a memory that starts with
                        or contains "User"
  foreign_glued         "User" glued to a foreign first-person word
                        ("User llamo …", "User mudo …", "User bin …")
  chat_shorthand        texting shorthand kept in the memory's own sentence
                        ("User n the boys …", "… w the boys", "… tbh", "… lmaooo")
                        (added 2026-11-30, after reading the memories of 41-52)

Text inside double quotes is a quotation of the user's own words and is not
checked; the sentence around it is.

The rules are deliberately simple and conservative; they are a tripwire for a
human reader, not a grammar checker. See test_readability.py for examples of
what does and does not fire.
"""

import re

__all__ = ["problems", "is_unreadable", "REASONS"]

REASONS = (
    "dangling_pronoun",
    "user_verb_agreement",
    "vocative",
    "interjection_lead",
    "first_person_left",
    "foreign_glued",
)

_APOS = "'\u2019"

# --- 1. dangling pronoun -------------------------------------------------
_PRONOUNS = {"it", "that", "they", "this"}
# "This weekend User …" / "That Monday …" are determiners, not pronouns.
_TIME_NOUNS = {
    "morning", "afternoon", "evening", "night", "week", "weekend", "month",
    "year", "summer", "winter", "spring", "autumn", "fall", "term",
    "semester", "season", "time", "monday", "tuesday", "wednesday",
    "thursday", "friday", "saturday", "sunday", "today",
}
_FIRST_WORDS = re.compile(r"^\W*([A-Za-z]+)(?:[" + _APOS + r"][A-Za-z]+)?\W*\s*([A-Za-z]*)")

# --- 2. subject-verb disagreement with "User" ----------------------------
_AGREEMENT = re.compile(
    r"\b(?:User|[Tt]he user)\s+(?:am|are|were|have|do|don[" + _APOS + r"]t|"
    r"aren[" + _APOS + r"]t|weren[" + _APOS + r"]t|haven[" + _APOS + r"]t)\b"
)

# --- 3. vocative -----------------------------------------------------------
_VOC_START = re.compile(
    r"^\W*(?:hey|hi|hiya|hello|dear|yo|thanks|thank you|morning|evening|"
    r"cheers|congrats|congratulations|sorry|welcome)\s+"
    r"[A-Z][a-z\u00e0-\u00ff]+\s*[,!]",
    re.IGNORECASE,
)
_VOC_END = re.compile(
    r",\s*([A-Z][a-z\u00e0-\u00ff]+)\s*([.!?]*)\s*[)\"'\u201d]*\s*$"
)
# clause before the trailing ", Name." that marks it as address, not apposition
_ADDRESS_CUE = re.compile(
    r"\b(?:you|your|you're|thanks|thank|congrats|congratulations|sorry|"
    r"hi|hey|hello|welcome|good luck|well done|cheers|bye|see ya)\b",
    re.IGNORECASE,
)
# words that commonly end a sentence after a comma and are not names
_NOT_NAMES = {
    "User", "Users", "Inc", "Ltd", "Jr", "Sr", "Too", "Though", "Yes", "No",
    "Please", "Again", "Today", "Tomorrow", "Yesterday", "Monday", "Tuesday",
    "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January",
    "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
}

# --- 4. interjection lead ---------------------------------------------------
_INTERJECTION = re.compile(
    r"^\W*(?:"
    r"(?:good news|great news|bad news|wow|yeah|yea|yes|oh|ooh|ah|well|so|"
    r"ok|okay|hmm+|um+|uh+|ugh|yay|oops|aw+|honestly|anyway|right|alright|"
    r"hey|hi|hello|btw|ps)\s*[,!]"
    r"|(?:ha(?:ha)+|he(?:he)+|lol+|lmao+|omg+|rofl|jaja(?:ja)*|mdr|xd)\b"
    # greetings and chat openers lead a memory only when a message was copied
    r"|(?:hello|hiya|yo|excuse me|good morning|buongiorno|bonjour|hola|hallo|"
    r"servus|moin|real talk|btw|tbh)\b"
    r")",
    re.IGNORECASE,
)

# --- 5. first-person word left in a "User" memory --------------------------
_USER_WORD = re.compile(r"\buser\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(
    r"(?<![\w" + _APOS + r"])(?:"
    r"I|I[" + _APOS + r"](?:m|ve|d|ll)|i|i[" + _APOS + r"](?:m|ve|d|ll)|ive|"
    r"[Mm]e|[Mm]y|[Mm]ine|[Mm]yself|[Ww]e|[Ww]e[" + _APOS + r"](?:re|ve|d|ll)|"
    r"im(?=\s+[^A-Z\s])|"
    r"[Oo]ur|[Oo]urs|[Oo]urselves|[Uu]s"
    r")(?![\w" + _APOS + r"])"
)

# --- 6. foreign first-person word glued to "User" --------------------------
_FOREIGN_AFTER_USER = {
    # Spanish
    "llamo", "soy", "tengo", "vivo", "trabajo", "mudo", "estoy", "quiero",
    "necesito", "voy", "yo", "me", "mi", "mis", "estudio", "puedo", "fui",
    "he", "hice", "acepté", "llegué", "jubilé",
    # German
    "bin", "habe", "hab", "wohne", "arbeite", "heiße", "heisse", "ziehe",
    "brauche", "ich", "mein", "meine", "meinen", "meinem", "sing", "nehme",
    "will", "mag", "soll", "muss", "kann", "möchte", "hasse",
    # French
    "suis", "ai", "je", "j", "moi", "mon", "ma", "mes", "habite", "travaille",
    "vais", "veux", "reçois", "bosse", "vise", "pars", "aimerais",
    # Italian
    "sono", "ho", "io", "faccio", "abito", "lavoro", "vado", "voglio", "mio",
    "mia", "iscritta", "iscritto",
    # Portuguese
    "sou", "tenho", "moro", "trabalho", "eu", "meu", "minha", "quero",
}
# English words in that list ("he", "me", "will", "sing", "ma" …) only count
# when what follows is clearly not English.
_AMBIGUOUS_EN = {"he", "me", "mi", "ma", "will", "sing", "ho", "j"}
_AFTER_USER = re.compile(r"\bUser(?:[" + _APOS + r"]s)?\s+([^\s,.;:!?]+)")
# "… bin User …", "… mag User …": the extractor swapped "ich" for "User"
_BEFORE_USER = re.compile(r"([^\s,.;:!?]+)\s+User\b")
# anywhere in a "User" memory: unmistakably foreign first-person pronouns
_FOREIGN_ANYWHERE = re.compile(
    r"(?<!\w)(?:(?:[Ii]ch|[Mm]ich|[Mm]ir|[Ww]ir|[Jj]e|[Mm]oi|[Nn]ous|[Nn]osotros|"
    r"io|eu)(?!\w)|[Jj][" + _APOS + r"]\w)"
)
_ASCII_WORD = re.compile(r"^[A-Za-z]+$")


def _dangling_pronoun(text):
    m = _FIRST_WORDS.match(text)
    if not m:
        return False
    first, second = m.group(1).lower(), m.group(2).lower()
    if first not in _PRONOUNS:
        return False
    if first in ("this", "that") and second in _TIME_NOUNS:
        return False
    return True


def _vocative(text, names):
    if _VOC_START.search(text):
        return True
    m = _VOC_END.search(text)
    if not m:
        return False
    name, punct = m.group(1), m.group(2)
    if name in _NOT_NAMES:
        return False
    if names and name in names:
        return True
    if "!" in punct or "?" in punct:
        return True
    before = text[: m.start()]
    return bool(_ADDRESS_CUE.search(before))


def _first_person_left(text):
    if not _USER_WORD.search(text):
        return False
    return bool(_FIRST_PERSON.search(text))


def _foreign_glued(text):
    if "User" not in text and "user" not in text:
        return False
    for m in _AFTER_USER.finditer(text):
        word = m.group(1).lower().strip(_APOS + "\"()")
        if word.startswith("j" + "'") or word.startswith("j\u2019"):
            return True
        if word not in _FOREIGN_AFTER_USER:
            continue
        if word in _AMBIGUOUS_EN:
            # "User will …", "User me …": look at the next word; only flag
            # when it is clearly not English (accented or a foreign verb).
            rest = text[m.end():].split()
            nxt = rest[0].lower().strip(".,!?") if rest else ""
            if nxt and (not _ASCII_WORD.match(nxt)
                        or (nxt in _FOREIGN_AFTER_USER and nxt not in _AMBIGUOUS_EN)):
                return True
            continue
        return True
    for m in _BEFORE_USER.finditer(text):
        word = m.group(1).lower()
        if word in _FOREIGN_AFTER_USER and word not in _AMBIGUOUS_EN:
            return True
    return bool(_USER_WORD.search(text) and _FOREIGN_ANYWHERE.search(text))


_QUOTED = re.compile(r'"[^"]*"|\u201c[^\u201d]*\u201d')


# Letters for words and texting acronyms, as whole words, anywhere outside a quotation.
_SHORTHAND = re.compile(
    r"(?<![\w'&])(?:n|r|w|u|ur|ye|yh|tbh|ngl|idk|imo|smh|rn|cuz|coz|pls|plz|thx|mb|ikr|bruh|"
    r"lol+|lo+l|lmao+|lmfao|rofl|ha(?:ha)+)(?![\w'&])",
    re.IGNORECASE,
)


def problems(text, names=None):
    """Return the list of readability problems found in one memory text.

    names: optional set of person names known to occur in the conversation
    (e.g. speaker labels); a trailing ", Name." with one of them counts as a
    vocative even without an address cue.
    """
    text = (text or "").strip()
    out = []
    if not text:
        return out
    # A quotation is the user's own words, marked as such ('On 2023-05-08 User
    # said: "It made me who I am"'): only the memory's own sentence is checked.
    text = _QUOTED.sub('"…"', text)
    if _dangling_pronoun(text):
        out.append("dangling_pronoun")
    if _AGREEMENT.search(text):
        out.append("user_verb_agreement")
    if _vocative(text, names):
        out.append("vocative")
    if _INTERJECTION.search(text):
        out.append("interjection_lead")
    if _first_person_left(text):
        out.append("first_person_left")
    if _foreign_glued(text):
        out.append("foreign_glued")
    if _SHORTHAND.search(text):
        out.append("chat_shorthand")
    return out


def is_unreadable(text, names=None):
    return bool(problems(text, names))
