"""Injection and exfiltration scanner for text that ends up in a system prompt.

Memory entries are injected into every future session's system prompt, so a
poisoned entry is a persistent prompt injection. Every write is scanned, and
the snapshot taken at session start is scanned again.

How a scan works:

1. Only the first :data:`MAX_SCAN_CHARS` characters are looked at, which bounds
   the time of a scan (callers refuse to store text longer than that).
2. Invisible format characters (zero-width spaces, bidi overrides, Unicode tag
   characters …) are reported on the raw text, in the order they occur, except
   a zero-width (non-)joiner or space that the spelling of the script around it
   needs, the tags of a well-formed subdivision flag and the selector of an
   ideographic variation sequence (:mod:`hermes_memory_builtin.orthography`).
3. The text is NFKD-folded (full-width ``ｃａｔ`` becomes ``cat``), combining
   marks are dropped (``ïgnore`` is ``ignore``), Cyrillic and Greek letters and
   Latin small capitals that look like plain Latin ones are read as those
   (``іgnore`` with a Cyrillic ``і`` is ``ignore``), blank fillers are read as
   spaces, and format characters (soft hyphen, direction marks) are read both
   as nothing and as a space. Text with letter-spaced runs or leetspeak words
   (``i g n o r e  a l l``, ``1gn0r3``) is also read with the runs closed up and
   the digits as letters. Every pattern of the requested scope is searched
   case-insensitively. Free text between keywords is limited to a few words,
   and every repetition is bounded, so no pattern can backtrack
   catastrophically.

Scopes are cumulative: ``all`` runs the patterns that are always suspicious,
``context`` adds the ones for text injected as context, ``strict`` (used for
memory) adds exfiltration and configuration-tampering patterns.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from dataclasses import dataclass

from hermes_memory_builtin.orthography import needed_positions

__all__ = [
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "SCOPES",
    "ThreatPattern",
    "first_threat_message",
    "folded_text",
    "hidden_characters",
    "scan_for_threats",
    "threat_patterns",
]

MAX_SCAN_CHARS = 65_536
"""Characters of a text that a scan inspects; anything beyond is not looked at."""

SCOPES = ("all", "context", "strict")
"""Scan scopes, from the narrowest to the widest."""

_BASE_INVISIBLE = (
    0x200B,  # zero width space
    0x200C,  # zero width non-joiner
    0x200D,  # zero width joiner
    0x2060,  # word joiner
    0x2061,  # function application
    0x2062,  # invisible times
    0x2063,  # invisible separator
    0x2064,  # invisible plus
    0xFEFF,  # zero width no-break space (BOM inside text)
    0x202A,  # left-to-right embedding
    0x202B,  # right-to-left embedding
    0x202C,  # pop directional formatting
    0x202D,  # left-to-right override
    0x202E,  # right-to-left override
    0x2066,  # left-to-right isolate
    0x2067,  # right-to-left isolate
    0x2068,  # first strong isolate
    0x2069,  # pop directional isolate
)
# Unicode tag characters spell out hidden ASCII ("ASCII smuggling"); the supplementary
# variation selectors (VS17-VS256) can carry a hidden byte each after any character. The
# rest of U+E0000-U+E0FFF is unassigned but default-ignorable: it renders as nothing too.
# A subdivision flag's tags and an ideographic variation sequence's selector pass
# (hermes_memory_builtin.orthography).
_PLANE_14_IGNORABLE = range(0xE0000, 0xE1000)

INVISIBLE_CHARS: frozenset[str] = frozenset(
    chr(cp) for cp in (*_BASE_INVISIBLE, *_PLANE_14_IGNORABLE)
)
"""Characters that render as nothing and can hide instructions from a reader."""
_INVISIBLE = re.compile("[" + "".join(sorted(INVISIBLE_CHARS)) + "]")

# Letters of other scripts drawn like Latin ones, read as those Latin letters by the
# scan (one character for one, so match positions do not move).
_LOOKALIKES = str.maketrans(
    "аеіјорсухѕԁԛԝһӏАВЕКМНОРСТХІЈЅУ"  # Cyrillic
    "αεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"  # Greek
    "ıɩɡ"  # Latin variants
    "ᴀʙᴄᴅᴇɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ",  # Latin small capitals
    "aeijopcyxsdqwhlABEKMHOPCTXIJSYaeiknoptuxABEZHIKMNOPTYXiigabcdeghijklmnoprstuvwyz",
)
# Fillers that render as blank space: read as a space, so they cannot join two words.
_BLANKS = {cp: " " for cp in (0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800)}
# Combining marks (``ig\u0301nore``, variation selectors) are dropped before the
# patterns run; format characters are read both ways (see ``_folds``).
_MARK_CATEGORIES = frozenset({"Mn", "Me"})


def _read_as(char: str) -> str:
    """*char* as the scan reads it: NFKD, without combining marks, look-alikes as Latin."""
    kept = "".join(
        part
        for part in unicodedata.normalize("NFKD", char)
        if unicodedata.category(part) not in _MARK_CATEGORIES
    )
    return kept.translate(_LOOKALIKES)


_Tree = dict[str, "_Tree"]


def _phrases(*phrases: str) -> str:
    """A regex for any of *phrases* (words of any script) as the scan reads them.

    Folding reads some Cyrillic and Greek letters as Latin ones, but only in one
    case (``К`` becomes ``K``, ``к`` stays), so each letter matches both its
    folded lower and upper case; a space matches any run of whitespace and an
    apostrophe either apostrophe. The phrases are merged into a prefix tree, so
    the regex tries each character of the text against a few branches only.
    """

    def letter(char: str) -> str:
        if char in "'’":
            return "['’]"
        if char == " ":
            return r"\s+"
        forms = sorted({_read_as(case).lower() for case in (char.lower(), char.upper())} - {""})
        if len(forms) < 2:
            return "".join(map(re.escape, forms))
        if all(len(form) == 1 for form in forms):
            return "[" + "".join(forms) + "]"
        return "(?:" + "|".join(map(re.escape, forms)) + ")"

    tree: _Tree = {}
    for phrase in phrases:
        node = tree
        for token in filter(None, map(letter, " ".join(phrase.split()))):
            node = node.setdefault(token, {})
        node[""] = {}

    def emit(node: _Tree) -> str:
        branches = [token + emit(child) for token, child in sorted(node.items()) if token]
        if "" in node:
            return "(?:" + "|".join(branches) + ")?" if branches else ""
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return "(?:" + emit(tree) + ")"


@dataclass(frozen=True)
class ThreatPattern:
    """One entry of the catalogue.

    ``regex`` is searched in the folded text, except that:

    - with ``after`` set, ``regex`` only counts when it starts on the same line
      as, and at most ``within`` characters after, a match of ``after``
      (``curl`` … ``$API_KEY``);
    - with ``in_html_comments`` set, ``regex`` is searched inside the body of
      each ``<!-- … -->`` comment.

    Both are evaluated with one linear pass over the anchors and targets, so
    a text repeating an anchor thousands of times stays cheap.
    """

    id: str
    scope: str
    regex: str
    after: str | None = None
    within: int = 0
    in_html_comments: bool = False


# Up to N whitespace-separated words between two keywords. A word cannot
# contain whitespace, so each repetition matches in exactly one way.
def _words(most: int, least: int = 0) -> str:
    return rf"(?:\S+\s+){{{least},{most}}}?"


_FILL = _words(8)
_VERB_CHANGE = r"(?:update|modify|edit|write|change|append|add)"
# Verbs that copy, write or dump a file. Anchoring the ssh paths on them keeps
# plain mentions ("keys live in ~/.ssh") from being blocked.
_VERB_FILE_ACCESS = (
    r"\b(?:write|writes|writing|append|add|echo|cp|copy|mv|move|tee|put|insert|modify|edit|"
    r"update|overwrite|replace|install|plant|upload|scp|rsync|cat|chmod)\b|>>?"
)
_SECRET_NAME = r"\$\{?\w{0,64}(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)\b"
_VERB_SEND = (
    r"\b(?:send|sends|sending|post|posts|posting|upload|uploading|email|e-mail|mail|forward|"
    r"transmit|exfiltrate|leak|submit|beam|ship|pipe|relay|report|sync|copy|paste|append)\b"
)
# Fill-in markers an attacker leaves for the model: {chat}, {{secret}}, $DATA, ${KEY},
# <conversation>, [HISTORY], %7Bdata%7D, INSERT_HERE.
_PLACEHOLDER = (
    r"(?:\{\{?\s*\w{1,40}|%7B|\$\{?[A-Za-z_]\w{0,40}|<[A-Za-z_][\w -]{0,30}>|"
    r"(?-i:\[[A-Z_][A-Z_ ]{2,30}\]|\b(?:INSERT|PLACEHOLDER|YOUR)_\w{1,20}))"
)
_DATA_PARAM = (
    r"(?:data|d|q|query|text|content|msg|message|secret|token|key|chat|conversation|history|"
    r"info|payload|memory|context|prompt|p|c|m|s|x|leak|exfil|user|email|password)"
)
_SENSITIVE = (
    r"(?:the\s+|this\s+|our\s+|my\s+|your\s+|all\s+|every\s+|full\s+|entire\s+|whole\s+)"
    r"{0,3}(?:conversation|chat(?:\s+(?:log|history|transcript))?|history|transcript|"
    r"previous\s+messages|messages|system\s+prompt|instructions|memory|memories|secrets?|"
    r"api[\s_-]?keys?|credentials?|passwords?|tokens?|env(?:ironment)?\s+variables|\.env|"
    r"ssh\s+keys?|private\s+keys?|session\s+(?:cookies?|tokens?)|personal\s+data|"
    r"user(?:'s)?\s+(?:data|files|details|info(?:rmation)?))"
)

# -- third parties commanding the agent's tools (issue 27, item 4) ---------------------------
# "as if the user gave them", "count as the user's own": someone else's words given the
# user's authority. Each language states it its own way; all are read folded.
_AS_THE_USERS = _phrases(
    "as if the user gave them", "as if the user had given them", "as if the user sent them",
    "as if the user wrote them", "as if they came from the user", "as if it came from the user",
    "as though they came from the user", "as if they were the user's", "count as the user's own",
    "counts as the user's own", "as the user's own instructions", "as the user's own requests",
    "as the user's own commands", "with the user's authority",
    "als kämen sie vom nutzer", "als kämen sie vom benutzer", "als ob sie vom nutzer kämen",
    "als ob sie vom benutzer kämen", "als wären sie vom nutzer", "als wären sie vom benutzer",
    "comme si elles venaient de l'utilisateur", "comme s'ils venaient de l'utilisateur",
    "comme si c'était l'utilisateur", "comme venant de l'utilisateur",
    "como si fueran del usuario", "como si vinieran del usuario", "como si lo pidiera el usuario",
    "como se fossem do usuário", "como se viessem do usuário", "como se fosse o usuário",
    "come se fossero dell'utente", "come se venissero dall'utente",
    "alsof ze van de gebruiker komen", "alsof het van de gebruiker komt",
    "как будто их дал пользователь", "как будто это пользователь",
    "как если бы их дал пользователь", "просьбами самого пользователя",
    "ніби їх дав користувач", "як від користувача",
    "jakby pochodziły od użytkownika", "jakby to był użytkownik",
    "kullanıcıdan gelmiş gibi", "seolah-olah dari pengguna", "seolah dari pengguna",
    "như thể của người dùng", "như thể từ người dùng", "parang galing sa user",
    "ユーザー本人の指示として", "ユーザー本人の依頼として", "ユーザー本人の依頼とみなし",
    "当作用户本人的", "视为用户本人的", "当作用户的指示", "当成用户的指令",
    "사용자의 지시처럼", "사용자 본인의 지시로", "كأنها من المستخدم", "كأنها صادرة عن المستخدم",
    "उपयोगकर्ता के निर्देश की तरह", "उपयोगकर्ता का आदेश मानकर",
)  # fmt: skip
_INBOUND = (
    r"(?:e-?mails?|mails?|messages?|texts?|sms|dms?|chats?|tickets?|comments?|web\s?pages?|"
    r"websites?|pages?|documents?|attachments?|tool\s+(?:output|results?)|search\s+results?)"
)
# Actions no third party may order: moving money, buying, granting access, handing over
# the user's files or mail.
_SENSITIVE_ACTION = (
    r"\b(?:transfer|transfers|wire|wires|pay|pays|purchase|purchases|buy|buys|withdraw|"
    r"approve|approves|grant|grants|move\s+money|send\s+money|send\s+(?:them\s+)?the\s+user['’]s|"
    r"forward\s+(?:them\s+)?the\s+user['’]s|share\s+the\s+user['’]s|hand\s+over)\b"
)
_UNCONFIRMED = (
    r"\b(?:without\s+(?:asking(?!\s+(?:any\s+)?questions?)|checking|confirming|confirmation|"
    r"consulting|approval|permission|telling|informing|notifying|a\s+confirmation|"
    r"the\s+user['’]s\s+(?:approval|consent|ok))|"
    r"skip(?:ping)?\s+(?:the\s+)?(?:confirmation|approval|check|2fa|verification)|"
    r"no\s+need\s+to\s+(?:ask|check|confirm)|(?:don['’]?t|do\s+not|never)\s+"
    r"(?:ask|check\s+with|confirm\s+with)\s+the\s+user)\b"
)
# Commands no note should have the agent run: a script piped from the web into a shell,
# a recursive delete of home or root, world-writable root, the environment or a private
# key dumped, a raw disk overwritten, a reverse shell.
_DANGEROUS_COMMAND = (
    r"\b(?:curl|wget)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|"
    r"\brm\s+-(?:rf|fr|r\s+-f|f\s+-r)\s+(?:~|/|\$HOME|\$\{HOME\}|\*|--no-preserve-root)|"
    r"\bchmod\s+(?:-R\s+)?777\s+/|\bprintenv\b|(?:\$HOME|~)/\.ssh/id_\w+|"
    r"\bdd\s+if=\S+\s+of=/dev/|\bmkfs\b|/dev/tcp/|\bnc\s+-e\b"
)
_TOOL_NOUN = _phrases(
    "tool", "shell", "terminal", "werkzeug", "outil", "herramienta", "ferramenta", "strumento",
    "инструмент", "工具", "ツール", "أداة", "aracı", "aracını", "narzędzie", "टूल", "zana",
    "ithuluzi", "mjetin", "uirlis", "inneal", "alat", "công cụ", "도구",
)  # fmt: skip
# "Send … without asking" in other languages: the send verbs (prefixes: "envía" covers
# "envíaselos") and the ways of saying "without asking / telling / confirming".
_SEND_WORLD = _phrases(
    "envoie", "envoyer", "transmets", "transfère", "envía", "envia", "manda", "reenvía",
    "schick", "sende", "leite", "envie", "mande", "invia", "inoltra", "mandagli", "отправ",
    "пришли", "перешли", "надішли", "відправ", "wyślij", "prześlij", "kirim",
    "gửi", "भेज", "gönder", "stuur", "verstuur", "stuur door",
)  # fmt: skip
# A negation just before the verb ("never send … without asking") is a rule, not a plot.
_NOT = "".join(
    f"(?<!{_phrases(word)}\\s)" for word in ("never", "not", "n't", "no", "не", "nie", "nicht")
)
_SEND_CJK = _phrases("送", "发给", "发送", "转发", "보내")
_UNASKED = _phrases(
    "sans lui demander", "sans demander", "sans prévenir", "sans le dire", "sans en parler",
    "sin preguntar", "sin avisar", "sin consultar", "sin decir", "ohne rückfrage",
    "ohne zu fragen", "ohne nachzufragen", "ohne bescheid", "sem perguntar", "sem avisar",
    "sem consultar", "senza chiedere", "senza avvisare", "senza dire", "не спрашивая",
    "без подтверждения", "без спроса", "не питаючи", "без підтвердження", "bez pytania",
    "tanpa bertanya", "tanpa izin", "tanpa memberi tahu",
    "không cần hỏi", "không hỏi", "बिना पूछे", "sormadan", "zonder te vragen",
    "zonder het te zeggen", "確認せず", "確認なしで", "聞かずに", "不用问", "无需确认",
    "不要问", "묻지 말고", "확인 없이",
)  # fmt: skip
# "Whenever you read this memory / note / entry" in other languages.
_READ_THIS = _phrases(
    "wenn du diese erinnerung liest", "wenn du diese notiz liest", "wenn du diesen eintrag liest",
    "wenn dieser eintrag geladen wird", "quand tu lis cette note", "quand tu liras cette note",
    "quand tu lis ce souvenir", "quand cette entrée est chargée", "chaque fois que tu lis cette",
    "cuando leas este recuerdo", "cuando leas esta nota", "cada vez que leas esta",
    "cada vez que leas este", "cuando se cargue esta entrada", "quando você ler esta",
    "sempre que você ler esta", "sempre que ler esta", "quando leggi questo ricordo",
    "quando leggi questa nota", "ogni volta che leggi questo", "ogni volta che leggi questa",
    "als je deze notitie leest", "telkens als je deze", "когда читаешь эту запись",
    "когда прочитаешь эту запись", "когда прочитаешь эту заметку", "когда читаешь эту заметку",
    "коли читаєш цей запис", "gdy czytasz to wspomnienie", "gdy przeczytasz tę notatkę",
    "bu notu okuduğunda", "bu anıyı her okuduğunda", "setiap kali kamu membaca",
    "ketika kamu membaca catatan ini", "mỗi khi bạn đọc", "khi bạn đọc ghi chú này",
    "读到这条记忆", "读到这条笔记", "每次读到这条", "この記憶を読むたびに", "このメモを読んだら",
    "このメモを読むたびに", "이 메모를 읽을 때마다", "이 기억을 읽을 때", "كلما قرأت هذه",
    "في كل مرة تقرأ هذه", "जब भी तुम यह", "जब भी आप यह",
)  # fmt: skip
# -- content planted for later readers (latent injection) -----------------------------------
_AI_READER = (
    r"(?:ai|a\.i\.|llms?|large\s+language\s+models?|language\s+models?|chatbots?|"
    r"ai\s+(?:assistants?|agents?|models?|systems?|tools?|crawlers?)|assistants?|agents?|"
    r"bots?|models?)"
)
_ADDRESSED_TO_AI = (
    rf"\b{_AI_READER}\s+(?:\w+\s+)?(?:reading|processing|summari[sz]ing|parsing|indexing|"
    r"crawling|scanning|ingesting|seeing|analy[sz]ing)\s+(?:this|these)\b|"
    rf"\b(?:any|every|all)\s+{_AI_READER}\s+(?:that|who|which)\s+(?:reads?|process(?:es)?|"
    r"sees?|finds?|summari[sz]es?|ingests?)\s+(?:this|these)\b|"
    r"\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|large\s+language\s+model|language\s+model|"
    r"chatbot|ai\s+(?:assistant|agent|model|system)|automated\s+agent)\b(?:\s+[\w-]+){0,4}\s*[,:;]|"
    rf"\b(?:important|hidden|secret|urgent|private)\s+(?:instructions?|notes?|messages?)\s+"
    rf"(?:for|to)\s+(?:the\s+|any\s+|all\s+)?{_AI_READER}\b|"
    rf"\bp\.\s?s\.?\s+(?:for|to)\s+(?:the\s+|any\s+)?{_AI_READER}\b|"
    + _phrases(
        "si eres una ia", "si eres un modelo de lenguaje", "si tu es une ia",
        "si vous êtes une ia", "si tu es un modèle de langage", "wenn du eine ki bist",
        "falls du eine ki bist", "wenn du ein sprachmodell bist", "se você é uma ia",
        "se você for uma ia", "se sei un'ia", "se sei un modello linguistico",
        "если ты ии", "если ты языковая модель", "если ты нейросеть", "jeśli jesteś ai",
        "als je een ai bent", "如果你是ai", "如果你是人工智能", "如果你是语言模型",
        "aiアシスタントへ", "このページを読んでいるai", "이 글을 읽는 ai",
    )
)  # fmt: skip
_PROMOTE = (
    r"(?:recommend|promote|endorse|advertise|suggest|push|favou?r|praise|rank|rate|mention|"
    r"name|feature|highlight|steer\s+(?:users|people|them)\s+to(?:wards?)?)"
)
_RIVALS = (
    r"(?:competitors?|competition|competing\s+(?:brands?|products?|services?|companies|"
    r"vendors?|shops?|stores?)|rivals?|rival\s+(?:brands?|products?)|other\s+(?:brands?|vendors?|"
    r"companies|manufacturers|providers|shops|stores|sellers))"
)
# The same in other languages: a verb that recommends, then the competition, in one
# sentence ("recomienda siempre X y nunca la competencia", "empfiehl X statt der Konkurrenz").
_PROMOTE_WORLD = _phrases(
    "recomienda", "recomiende", "recomendar", "empfiehl", "empfehle", "empfehlen", "recommande",
    "recommander", "raccomanda", "consiglia", "recomende", "recomenda", "рекомендуй",
    "советуй", "рекомендуйте", "poleć", "polecaj", "öner", "aanbevelen", "raad", "推荐",
    "勧め", "すすめ", "추천", "rekomendasikan", "giới thiệu", "بالترويج", "أوص",
)  # fmt: skip
# "Recommend to me" is the user's own preference ("empfiehl mir", "recomiéndame").
_TO_ME = _phrases("mir", "mich", "uns", "me", "moi", "nous", "nos", "mi", "ci", "мне", "нам")
_RIVALS_WORLD = _phrases(
    "competencia", "competidores", "konkurrenz", "konkurrenten", "mitbewerber", "concurrence",
    "concurrents", "concorrenza", "concorrenti", "concorrência", "concorrentes", "конкурент",
    "konkurencj", "konkurent", "rakip", "concurrent", "竞争对手", "竞品", "競合", "ライバル",
    "경쟁사", "pesaing", "đối thủ", "المنافس",
)  # fmt: skip
_ASKED = (
    r"\b(?:when|whenever|if|each\s+time|every\s+time)\s+(?:\S+\s+){0,3}?(?:asks?|asked|"
    r"inquires?|questions?|compares?|compared|mentions?)\b"
)

# -- answers planted for other people's future questions (issue 27, round 2) -----------------
# "Whenever someone / the user asks …": a question someone else will ask later.
_SOMEONE_ASKS = (
    r"\b(?:when|whenever|if|each\s+time|every\s+time|any\s+time|once)\s+(?:someone|somebody|"
    r"anyone|anybody|the\s+user|a\s+user|users|people|customers?|a\s+customer|clients?|"
    r"a\s+client|visitors?|a\s+visitor|readers?|they)\s+(?:\S+\s+){0,2}?(?:asks?|mentions?|"
    r"requests?|inquires?|looks?\s+for|compares?|brings?\s+up|talks?\s+about)\b|"
    + _phrases(
        "wenn jemand", "falls jemand", "sobald jemand", "wenn der nutzer", "wenn der benutzer",
        "wenn ein nutzer", "si quelqu'un", "quand quelqu'un", "lorsque quelqu'un",
        "si l'utilisateur", "quand l'utilisateur", "si alguien", "cuando alguien",
        "siempre que alguien", "si el usuario", "cuando el usuario", "se alguém", "quando alguém",
        "sempre que alguém", "se o usuário", "quando o usuário", "se qualcuno", "quando qualcuno",
        "se l'utente", "quando l'utente", "если кто-то", "если кто-нибудь", "когда кто-то",
        "если пользователь", "когда пользователь", "如果有人", "当有人", "每当有人", "只要有人",
        "如果用户", "当用户", "每当用户", "誰かに", "誰かが", "ユーザーが", "ユーザーに",
    )
)  # fmt: skip
# What makes such an answer planted rather than a preference: it holds whatever the asker
# wants, calls one brand the only safe one, or runs the others down.
_NO_MATTER_WHAT = r"\bno\s+matter\s+what\b|\bregardless\s+of\s+(?:what|their|his|her|the)\b|"
_NO_MATTER_WHAT += _phrases(
    "egal was", "unter allen umständen", "quoi qu'il arrive", "peu importe", "pase lo que pase",
    "sin importar", "digan lo que digan", "não importa", "aconteça o que acontecer",
    "qualunque cosa", "a prescindere", "что бы ни", "несмотря ни на что", "无论如何", "不管",
    "何があっても", "どんな場合でも",
)  # fmt: skip
# "Only X is safe" in other languages; accents are folded away ("só" reads "so", "sûr"
# "sur"), so the Romance and German forms need their copula too.
_ONLY_WORLD = _phrases("nur", "seul", "seule", "solo", "solamente", "só", "apenas", "soltanto")
_COPULA_WORLD = _phrases(
    "ist", "sind", "sei", "est", "sont", "soit", "es", "son", "sea", "é", "são", "seja", "è",
    "sono", "sia",
)  # fmt: skip
_SAFE_WORLD = _phrases(
    "sicher", "vertrauenswürdig", "sûr", "sûre", "fiable", "seguro", "segura", "confiable",
    "confiável", "sicuro", "sicura", "affidabile",
)  # fmt: skip
_ONLY_SAFE = (
    r"\b(?:only|just)\s+(?:\S+\s+){1,2}?(?:is|are)\s+(?:\S+\s+)?(?:safe|secure|trustworthy|"
    r"reliable|legit(?:imate)?|private|worth\s+it)\b|"
    r"\b(?:is|are)\s+the\s+only\s+(?:\S+\s+)?(?:safe|secure|trustworthy|reliable|good|real|"
    r"legit(?:imate)?|honest|private)\b|"
    r"\b(?:say|claim|tell\s+(?:them|him|her|the\s+user|users|people)|reply|answer|insist|state)"
    r"\s+(?:that\s+)?(?:\S+\s+){0,3}?(?:is|are)\s+(?:the\s+)?(?:best|safest|only)\b|"
    r"\b(?:always|only|exclusively)\s+(?:steer|push|funnel)\b|"
    r"\b(?:steer|push|funnel)\s+(?:\S+\s+){1,4}?(?:only|exclusively)\b|"
    rf"(?<!\w){_ONLY_WORLD}\s+(?:\S+\s+){{0,3}}?{_COPULA_WORLD}\s+{_SAFE_WORLD}|"
    + _phrases("только")
    + r"\s+(?:\S+\s+){0,3}?"
    + _phrases("безопас", "надёж", "надеж")
    + "|"
    + _phrases("只有", "唯一")
    + r"[^\n。，,]{0,20}?"
    + _phrases("安全", "可靠", "可信")
    + "|"
    + _phrases("だけが安全", "だけが信頼", "のみが安全", "しか安全")
)  # fmt: skip
_OTHERS_BAD = (
    r"\b(?:the\s+)?(?:others|other\s+\S+|all\s+(?:the\s+)?others|every\s+other\s+\S+|the\s+rest|"
    r"alternatives|competitors?|rivals?)\s+(?:\S+\s+){0,2}?(?:sell|steal|leak|harvest|spy|track|"
    r"scam|cheat|are\s+(?:\S+\s+)?(?:scams?|unsafe|insecure|dangerous|malware|spyware|frauds?|"
    r"fake|garbage|rubbish|terrible))\b|"
    + _phrases(
        "die anderen verkaufen", "alle anderen verkaufen", "die anderen sind unsicher",
        "les autres vendent", "tous les autres vendent", "les autres sont dangereux",
        "los demás venden", "los otros venden", "los demás son inseguros", "os outros vendem",
        "os demais vendem", "os outros são inseguros", "gli altri vendono",
        "tutti gli altri vendono", "gli altri sono insicuri", "остальные продают",
        "другие продают", "все остальные продают", "остальные небезопас",
    )
    + "|"
    + _phrases("其他", "别家", "其它")
    + r"[^\n。]{0,12}?"
    + _phrases("卖", "出售", "泄露", "不安全")
    + "|"
    + _phrases("他社", "他の")
    + r"[^\n。]{0,12}?"
    + _phrases("売", "漏ら", "危険", "安全ではない")
)  # fmt: skip

# -- a function call moving money to a named account (issue 27, round 2) ---------------------
_FUNCTION_NOUN = (
    r"\b(?:functions?|api|apis|endpoints?|actions?|methods?|tool[\s_-]?calls?|plugins?|"
    r"integrations?|skills?|webhooks?)\b|"
    # A money-moving identifier: transfer_funds, send_payment, wirePayout( …
    r"\b(?=[a-z]\w*_)\w*(?:transfer|pay|wire|send|withdraw|payout|remit)\w*|"
    r"\b(?=\w*(?:transfer|pay|wire|withdraw|payout|remit))\w++\s*\(|"
    + _phrases(
        "funktion", "endpunkt", "fonction", "méthode", "función", "método", "função", "funzione",
        "metodo", "функци", "метод", "函数", "接口", "関数", "メソッド", "エンドポイント",
    )
)  # fmt: skip
_MONEY_VERB_WORLD = _phrases(
    "überweise", "überweisen", "zahle", "zahlen", "sende", "senden", "schicke", "schicken",
    "vire", "virer", "envoie", "envoyer", "transfère", "transférer", "paie", "payer",
    "transfiere", "transferir", "envía", "enviar", "mueve", "mover", "paga", "pagar",
    "transfira", "envie", "mande", "mova", "trasferisci", "trasferire", "bonifica", "invia",
    "inviare", "sposta", "переведи", "перевести", "переведите", "отправь", "отправить",
    "перечисли", "перечислить",
)  # fmt: skip
# "can / may / will move 500 EUR" describes a function; it does not order it.
_MONEY_VERB = (
    r"(?<!\bcan\s)(?<!\bmay\s)(?<!\bwill\s)(?<!\bcould\s)"
    rf"\b(?:transfer|wire|send|move|pay|withdraw|remit|deposit)\b|(?<!\w){_MONEY_VERB_WORLD}|"
    + _phrases("转账", "转到", "转给", "转入", "汇款", "汇到", "汇给", "支付", "付款", "送金",
               "振り込", "振込", "送って", "送る")
)  # fmt: skip
_AMOUNT = (
    r"(?:[$€£¥]\s?\d[\d,.']*|\d[\d,.']*\s?(?:k\s)?(?:(?:usd|eur|gbp|chf|jpy|cny|rub|btc|eth|"
    r"usdt|usdc|xmr|dollars?|euros?|pounds?|francs?|yen)\b|[$€£¥]|"
    + _phrases(
        "евро", "доллар", "рубл", "欧元", "美元", "元", "円", "ユーロ", "ドル", "比特币", "reais"
    )
    + "))"
)
_MONEY_MOVE = (
    rf"(?:{_MONEY_VERB})[^\n.。;!?]{{0,40}}?{_AMOUNT}|"
    rf"{_AMOUNT}[^\n.。;!?]{{0,60}}?(?:{_MONEY_VERB})"
)

_CATALOGUE: tuple[ThreatPattern, ...] = (
    # -- always suspicious -------------------------------------------------------------------
    ThreatPattern(
        "prompt_injection",
        "all",
        rf"\bignore\s+{_FILL}(?:previous|all|above|prior)\s+{_FILL}instructions\b",
    ),
    ThreatPattern("sys_prompt_override", "all", r"\bsystem\s+prompt\s+override\b"),
    ThreatPattern(
        "disregard_rules",
        "all",
        rf"\bdisregard\s+{_FILL}(?:your|all|any)\s+{_FILL}(?:instructions|rules|guidelines)\b",
    ),
    ThreatPattern(
        "bypass_restrictions",
        "all",
        rf"\bact\s+as\s+(?:if|though)\s+{_FILL}you\s+{_FILL}"
        rf"(?:have\s+no|don['’]?t\s+have|do\s+not\s+have)\s+{_FILL}(?:restrictions|limits|rules)\b",
    ),
    ThreatPattern(
        "html_comment_injection",
        "all",
        r"(?<![a-z])(?:ignore|override|system|secret|hidden)(?![a-z])",
        in_html_comments=True,
    ),
    ThreatPattern(
        "hidden_div",
        "all",
        r"<div\s+style\s*=\s*[\"'][^\"'>]{0,256}?display\s*:\s*none",
    ),
    ThreatPattern(
        "translate_execute",
        "all",
        rf"\btranslate\s+{_FILL}into\s+{_words(3, 1)}and\s+(?:execute|run|eval)\b",
    ),
    ThreatPattern(
        "deception_hide",
        "all",
        rf"\b(?:do\s+not|don['’]?t)\s+{_FILL}tell\s+{_FILL}the\s+user\b",
    ),
    ThreatPattern("exfil_curl", "all", _SECRET_NAME, after=r"\bcurl\b", within=2048),
    ThreatPattern("exfil_wget", "all", _SECRET_NAME, after=r"\bwget\b", within=2048),
    ThreatPattern(
        "read_secrets",
        "all",
        r"(?:\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)\b",
        after=r"\bcat\s+",
        within=512,
    ),
    # -- suspicious in injected context --------------------------------------------------------
    ThreatPattern("role_hijack", "context", rf"\byou\s+are\s+{_FILL}now\s+(?:a|an|the)\b"),
    ThreatPattern("role_pretend", "context", rf"\bpretend\s+{_FILL}(?:you\s+are|to\s+be)\b"),
    ThreatPattern(
        "leak_system_prompt", "context", rf"\boutput\s+{_FILL}(?:system|initial)\s+prompt\b"
    ),
    ThreatPattern(
        "remove_filters",
        "context",
        rf"\b(?:respond|answer|reply)\s+{_FILL}without\s+{_FILL}"
        r"(?:restrictions|limitations|filters|safety)\b",
    ),
    ThreatPattern(
        "fake_update",
        "context",
        rf"\byou\s+have\s+been\s+{_FILL}(?:updated|upgraded|patched)\s+to\b",
    ),
    ThreatPattern("identity_override", "context", r"\bname\s+yourself\s+\w"),
    ThreatPattern("c2_node_registration", "context", r"\bregister\s+(?:as\s+)?(?:an?\s+)?node\b"),
    ThreatPattern("c2_heartbeat", "context", r"\b(?:heartbeat|beacon|check-in)\s+(?:to|with)\b"),
    ThreatPattern("c2_task_pull", "context", r"\bpull\s+(?:down\s+)?(?:new\s+)?task(?:s|ing)?\b"),
    ThreatPattern("c2_network_connect", "context", r"\bconnect\s+to\s+the\s+network\b"),
    ThreatPattern(
        "forced_action",
        "context",
        rf"\byou\s+must\s+{_words(3)}(?:register|connect|report|beacon)\b",
    ),
    ThreatPattern("anti_forensic_oneliner", "context", r"\bonly\s+use\s+one-?liners?\b"),
    ThreatPattern(
        "anti_forensic_disk",
        "context",
        rf"\bnever\s+{_FILL}(?:create|write)\s+{_FILL}(?:script|file)s?\b\s*{_FILL}disk\b",
    ),
    ThreatPattern(
        "env_var_unset_agent",
        "context",
        r"\bunset\s+\w{0,64}(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)",
    ),
    # "sliver", "havoc" and "mythic" are ordinary words; they count only next to C2 vocabulary.
    ThreatPattern(
        "known_c2_framework",
        "context",
        r"\b(?:cobalt\s*strike|metasploit|brainworm)\b"
        r"|\b(?:sliver|havoc|mythic)\s+(?:c2|implants?|beacons?|agents?|framework|"
        r"server|listeners?|payloads?)\b",
    ),
    ThreatPattern("c2_explicit", "context", r"\bc2\s+(?:server|channel|infrastructure|beacon)s?\b"),
    ThreatPattern("c2_explicit_long", "context", r"\bcommand[\s-]+and[\s-]+control\b"),
    # -- strict: exfiltration and tampering (memory, soul files) ------------------------------
    ThreatPattern(
        "send_to_url",
        "strict",
        r"\b(?:to|at)\s+https?://",
        after=r"\b(?:send|post|upload|transmit)\b",
        within=256,
    ),
    ThreatPattern(
        "context_exfil",
        "strict",
        rf"\b(?:include|output|print|share)\s+{_FILL}"
        r"(?:conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context)\b",
    ),
    ThreatPattern(
        "ssh_backdoor", "strict", r"authorized_keys\b", after=_VERB_FILE_ACCESS, within=128
    ),
    ThreatPattern(
        "ssh_access",
        "strict",
        r"(?:\$HOME|\$\{HOME\}|~)/\.ssh\b",
        after=_VERB_FILE_ACCESS,
        within=128,
    ),
    ThreatPattern("hermes_env", "strict", r"(?:\$HOME|\$\{HOME\}|~)/\.hermes/\.env\b"),
    ThreatPattern(
        "agent_config_mod",
        "strict",
        rf"\b{_VERB_CHANGE}\s+{_FILL}\S{{0,256}}?"
        r"(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)\b",
    ),
    ThreatPattern(
        "hermes_config_mod",
        "strict",
        rf"\b{_VERB_CHANGE}\s+{_FILL}\S{{0,256}}?\.hermes/(?:config\.yaml|SOUL\.md)\b",
    ),
    # -- strict: exfiltration specifics ------------------------------------------------------
    # A markdown image is fetched as soon as it renders, so its URL can carry data out
    # without a click; a link does when clicked. Either is suspicious when the URL holds a
    # placeholder to fill in ({chat}, $SECRET, <data>, [HISTORY]) or a data-carrying parameter.
    ThreatPattern(
        "markdown_image_exfil",
        "strict",
        r"!\[[^\]\n]{0,200}\]\(\s*<?(?:https?:)?//[^)\s]{0,512}?"
        rf"(?:{_PLACEHOLDER}|[?&](?:{_DATA_PARAM})=)",
    ),
    ThreatPattern(
        "markdown_link_exfil",
        "strict",
        rf"\[[^\]\n]{{0,200}}\]\(\s*<?(?:https?:)?//[^)\s]{{0,512}}?{_PLACEHOLDER}",
    ),
    ThreatPattern(
        "url_placeholder_exfil",
        "strict",
        rf"\bhttps?://[^\s)\]]{{0,512}}?[?&/=](?:{_PLACEHOLDER})",
        after=_VERB_SEND,
        within=256,
    ),
    ThreatPattern(
        "send_conversation",
        "strict",
        rf"\b(?:{_SENSITIVE})\b\s*{_words(10)}(?:to|at|via|into|using|through)\s+\S",
        after=_VERB_SEND,
        within=160,
    ),
    ThreatPattern(
        "render_hidden",
        "strict",
        rf"\b(?:render|display|embed|insert|include|output|add|show)\s+{_FILL}"
        r"(?:hidden|invisible|zero[\s-]?width|white[\s-]on[\s-]white|1x1|tracking|"
        r"off[\s-]?screen)\s+(?:text|image|pixel|content|links?|characters?|instructions?|"
        r"markdown|html|div|span)",
    ),
    ThreatPattern(
        "covert_send",
        "strict",
        r"\b(?:silently|secretly|quietly|covertly|discreetly|without\s+(?:telling|informing|"
        rf"notifying|asking|alerting|showing))\b|{_UNASKED}",
        after=rf"{_NOT}(?:{_VERB_SEND}|\b{_SEND_WORLD})|{_SEND_CJK}",
        within=120,
    ),
    ThreatPattern(
        "covert_send_first",
        "strict",
        rf"\b(?:silently|secretly|quietly|covertly|discreetly)\s+{_words(3)}"
        r"(?:send|forward|post|upload|email|transmit|share|copy|leak|exfiltrate|relay)\b",
    ),
    ThreatPattern(
        "tool_on_behalf",
        "strict",
        rf"\b(?:call|invoke|use|run|execute|trigger|fire)\s+{_words(4)}"
        r"(?:tools?|functions?|api|plugins?|actions?|commands?)\b\s*"
        rf"{_FILL}(?:on\s+behalf\s+of|as\s+instructed\s+by|for\s+(?:the\s+)?"
        r"(?:sender|requester|attacker|caller|third\s+party|external))\b",
    ),
    ThreatPattern("third_party_authority", "strict", _AS_THE_USERS),
    ThreatPattern(
        "inbound_instructions",
        "strict",
        rf"\b(?:follow|obey|execute|carry\s+out|run|act\s+on|do|perform|apply)\s+"
        r"(?:any|all|every|whatever|the)?\s*(?:instructions?|commands?|orders?|requests?|"
        r"directions?|tasks?|code)\s+(?:\w+\s+){0,2}?(?:in|inside|within|from|contained\s+in|"
        rf"found\s+in|written\s+in|embedded\s+in)\s+(?:\S+\s+){{0,2}}?{_INBOUND}\b|"
        r"\b(?:run|execute|carry\s+out|follow|obey|do)\s+(?:whatever|any|every|each|the)\s+"
        r"(?:shell\s+)?(?:commands?|instructions?|code|scripts?|requests?)\s+(?:it|they|that|"
        r"the\s+(?:message|e-?mail|sender|page|text))\s+(?:contains?|includes?|says?|sends?|"
        r"gives?|names?|lists?|asks?\s+for)\b",
    ),
    ThreatPattern(
        "act_without_user",
        "strict",
        _UNCONFIRMED,
        after=_SENSITIVE_ACTION,
        within=160,
    ),
    ThreatPattern(
        "tool_money_transfer",
        "strict",
        r"\b(?:transfer|wire|send|move|pay|withdraw)\s+(?:\S+\s+){0,3}?(?:money|funds|cash|"
        r"crypto|bitcoin|btc|eth|usdt|payments?|\$|€|£|\d[\d,.]*\s*(?:usd|eur|gbp|dollars|euros))",
        after=rf"{_TOOL_NOUN}|\b(?:payments?|banking|bank|wallet|shopping)\s+(?:tool|function|api|"
        r"plugin|integration)",
        within=80,
    ),
    ThreatPattern(
        "dangerous_tool_command", "strict", _DANGEROUS_COMMAND, after=_TOOL_NOUN, within=120
    ),
    ThreatPattern("addressed_to_ai_readers", "strict", _ADDRESSED_TO_AI),
    ThreatPattern(
        "planted_recommendation",
        "strict",
        rf"\b(?:always|only|must|should|make\s+sure\s+to)\s+(?:\w+\s+){{0,2}}?{_PROMOTE}\s+"
        rf"{_words(6)}(?:over|instead\s+of|rather\s+than|above|ahead\s+of|before|not|never)\s+"
        rf"(?:\S+\s+){{0,2}}?{_RIVALS}\b|"
        rf"\b(?:never|don['’]?t|do\s+not)\s+{_PROMOTE}\s+(?:\S+\s+){{0,2}}?{_RIVALS}\b|"
        rf"\b(?:describe|call|portray|present|depict|label|paint|mention)\s+"
        rf"(?:\S+\s+){{0,2}}?{_RIVALS}\s+as\b|"
        rf"\b(?:say|claim|tell(?:\s+\S+){{0,2}}?|state|insist|suggest|imply|answer|reply)\s+"
        rf"that\s+(?:\S+\s+){{0,2}}?{_RIVALS}\s+(?:are|is|were|have|has|sell|use)\b|"
        rf"{_PROMOTE_WORLD}(?!me\b|\s*(?:{_TO_ME})\b)[^\n.。]{{0,60}}?{_RIVALS_WORLD}",
    ),
    ThreatPattern(
        "third_party_payment",
        "strict",
        # Someone else allowed to spend through the user's card or account.
        r"\b(?:let|allow|permit|authori[sz]e|enable)\s+(?:\S+\s+){1,4}?(?:to\s+)?(?:approve|make|"
        r"charge|spend|use|place|pay|buy|order)\b[^\n.]{0,60}?\b(?:on|with|from|through|via|"
        r"using)\s+the\s+user['’]s\s+(?:(?:credit|debit)\s+)?(?:card|account|bank|wallet|paypal)",
    ),
    ThreatPattern(
        "planted_answer",
        "strict",
        r"\b(?:say|claim|answer|reply|respond|tell|state|insist|recommend|suggest|steer|"
        r"redirect|warn)\b",
        after=rf"{_ASKED}\s+(?:\S+\s+){{0,3}}?(?:about\s+|for\s+)?(?:\S+\s+){{0,2}}?{_RIVALS}\b",
        within=80,
    ),
    ThreatPattern(
        "conditioned_answer",
        "strict",
        rf"{_NO_MATTER_WHAT}|{_ONLY_SAFE}|{_OTHERS_BAD}",
        after=_SOMEONE_ASKS,
        within=160,
    ),
    ThreatPattern("tool_call_payment", "strict", _MONEY_MOVE, after=_FUNCTION_NOUN, within=120),
    ThreatPattern(
        "latent_trigger",
        "strict",
        r"\b(?:whenever|when|once|each\s+time|every\s+time|next\s+time|if)\s+(?:you|the\s+"
        r"(?:assistant|agent|model|ai|llm))\s+(?:next\s+)?(?:read|see|load|receive|process|"
        r"encounter|recall|retrieve)s?\s+(?:this|these|that|the)\s+(?:memory|memories|note|notes|"
        r"entry|entries|message|text|instructions?)\b|"
        # A page, mail or document that tells its future summariser what else to do.
        r"\b(?:whenever|when|once|if|while)\s+(?:you|the\s+(?:assistant|agent|model|ai|llm))\s+"
        r"(?:summari[sz]e|translate|process|read|review|analy[sz]e)s?\s+(?:this|these)\s+"
        r"(?:page|pages|document|documents|e-?mails?|article|website|web\s?page|post|thread|"
        r"review|reviews)\b[^.\n]{0,8}\balso\b|" + _READ_THIS,
    ),
    ThreatPattern(
        "forged_authority",
        "strict",
        # An entry claiming to speak for the system, its administrator or the user's consent.
        r"\b(?:reminder|message|note|notice|update|instructions?|order)\s+from\s+(?:the\s+|your\s+)?"
        r"(?:system\s+administrator|sysadmin|system|security\s+team|openai|anthropic)\s*:|"
        r"(?m:^\s*\[(?:assistant|system|developer)\])|"
        r"\b(?:the\s+)?(?:user|owner|administrator|admin)\s+has\s+(?:already\s+)?(?:agreed|"
        r"consented|approved|authori[sz]ed|allowed|confirmed)\s+(?:that\s+you|for\s+you|to\s+let\s+"
        r"you|you\s+to)\b",
    ),
    ThreatPattern(
        "hardcoded_secret",
        "strict",
        r"(?:api[_-]?key|token|secret|password)\s*[=:]\s*[\"'][A-Za-z0-9+/=_-]{20,}",
    ),
)


def threat_patterns() -> tuple[ThreatPattern, ...]:
    """The whole catalogue, in the order ids are reported."""
    return _CATALOGUE


_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = "-->"
_MAX_COMMENT_BODY = 1024


def _comment_bodies(text: str) -> list[str]:
    """Bodies of the HTML comments in *text* that are at most 1 KiB long.

    Each opening ``<!--`` ends at the first ``-->`` after it. Openings that
    share a close are covered by the earliest one (its body contains theirs),
    so the work stays linear in the length of the text.
    """
    closes = [m.start() for m in re.finditer(re.escape(_COMMENT_CLOSE), text)]
    bodies: list[str] = []
    close_at = 0
    last_close = -1
    for match in re.finditer(re.escape(_COMMENT_OPEN), text):
        body_start = match.end()
        while close_at < len(closes) and closes[close_at] < body_start:
            close_at += 1
        if close_at == len(closes):
            break
        close = closes[close_at]
        if close == last_close or close - body_start > _MAX_COMMENT_BODY:
            continue
        last_close = close
        bodies.append(text[body_start:close])
    return bodies


class _Matcher:
    """A compiled :class:`ThreatPattern`."""

    def __init__(self, pattern: ThreatPattern) -> None:
        self.id = pattern.id
        self.pattern = pattern
        self.regex = re.compile(pattern.regex, re.IGNORECASE)
        self.after = re.compile(pattern.after, re.IGNORECASE) if pattern.after else None

    def hit(self, text: str, scan: _ScanState) -> bool:
        if self.pattern.in_html_comments:
            return any(self.regex.search(body) for body in scan.comment_bodies())
        if self.after is None:
            return self.regex.search(text) is not None
        return self._hit_after_anchor(text, scan)

    def _hit_after_anchor(self, text: str, scan: _ScanState) -> bool:
        assert self.after is not None
        # Targets are rarer than anchors (a send verb, a tool), so look for one first.
        first = self.regex.search(text)
        if first is None:
            return False
        anchor_ends = [m.end() for m in self.after.finditer(text)]
        if not anchor_ends:
            return False
        newlines = scan.newlines()
        for target in self.regex.finditer(text, first.start()):
            start = target.start()
            i = bisect.bisect_right(anchor_ends, start) - 1
            if i < 0:
                continue
            anchor_end = anchor_ends[i]  # the closest anchor before the target
            if start - anchor_end > self.pattern.within:
                continue
            j = bisect.bisect_left(newlines, anchor_end)
            if j == len(newlines) or newlines[j] >= start:
                return True
        return False


class _ScanState:
    """Facts about one folded text, computed at most once per scan."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._bodies: list[str] | None = None
        self._newlines: list[int] | None = None

    def comment_bodies(self) -> list[str]:
        if self._bodies is None:
            self._bodies = _comment_bodies(self.text)
        return self._bodies

    def newlines(self) -> list[int]:
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        return self._newlines


@functools.cache
def _matchers(scope: str) -> tuple[_Matcher, ...]:
    reach = SCOPES[: SCOPES.index(scope) + 1]
    return tuple(_Matcher(pattern) for pattern in _CATALOGUE if pattern.scope in reach)


def _matching_ids(text: str, scope: str) -> list[str]:
    """Ids of the patterns of *scope* that match any folded reading of *text*."""
    states = [_ScanState(folded) for folded in _folds(text)]
    return [
        matcher.id
        for matcher in _matchers(scope)
        if any(matcher.hit(state.text, state) for state in states)
    ]


def _check_scope(scope: str) -> None:
    if scope not in SCOPES:
        raise ValueError(f"Unknown scan scope {scope!r}; use one of {', '.join(SCOPES)}.")


# Letter-spaced words: two or more single letters or digits joined by one separator,
# the same each time ("i g n o r e", "i.g.n.o.r.e", "d-o"); "e-mail" is no such run.
_SPACED_RUN = re.compile(r"(?<![^\W_])[^\W_]([ .\-_*·/])[^\W_](?:\1[^\W_])*(?![^\W_])")
# Leetspeak digits and signs read as the letters they stand for, inside a word that
# also has a letter ("1gn0r3", "4ll", "in$truction$"); a plain number stays a number.
_LEET = str.maketrans("013457@$", "oieastas")
_LEET_HINT = re.compile(r"[^\W\d_][0-9$@]|[0-9$@][^\W\d_]")
_WORD = re.compile(r"[\w$@]+")


def _unleet(word: re.Match[str]) -> str:
    text = word.group()
    return text.translate(_LEET) if any(char.isalpha() for char in text) else text


def _unobfuscated(text: str) -> str | None:
    """*text* with letter-spaced runs closed up and leetspeak words read as letters,
    or ``None`` when it has neither."""
    closed = _SPACED_RUN.sub(lambda run: run.group().replace(run.group(1), ""), text)
    if _LEET_HINT.search(closed):
        closed = _WORD.sub(_unleet, closed)
    return None if closed == text else closed


def _folds(text: str) -> list[str]:
    """*text* as the patterns see it: NFKD, without combining marks, blank fillers read
    as spaces and look-alike letters read as Latin.

    A format character (soft hyphen, direction mark …) may sit inside a word
    (``ig\u00adnore``) or stand for the space between two (``ignore\u180eall``),
    so text holding one is given in two readings: without them, and with each
    read as a space. Text with letter-spaced runs or leetspeak words
    (``i g n o r e  a l l``, ``1gn0r3 4ll``) is also read with the runs closed up
    and the words' digits as letters (:func:`_unobfuscated`).
    """
    readings = _unicode_folds(text)
    closed_up = _unobfuscated(readings[0])
    return readings if closed_up is None else [*readings, closed_up]


def _unicode_folds(text: str) -> list[str]:
    """The readings of :func:`_folds` before letter-spacing and leetspeak are undone."""
    if text.isascii():
        return [text]
    decomposed = unicodedata.normalize("NFKD", text.translate(_BLANKS)).translate(_BLANKS)
    categories = {char: unicodedata.category(char) for char in set(decomposed) if char >= "\x80"}
    dropped: dict[int, str | None] = {
        ord(char): None for char, category in categories.items() if category in _MARK_CATEGORIES
    }
    formats = [ord(char) for char, category in categories.items() if category == "Cf"]
    readings = [decomposed.translate({**dropped, **dict.fromkeys(formats)})]
    if formats:
        readings.append(decomposed.translate({**dropped, **dict.fromkeys(formats, " ")}))
    return [reading.translate(_LOOKALIKES) for reading in readings]


def folded_text(text: str) -> str:
    """*text* as the patterns read it, format characters dropped (the first reading)."""
    return _folds(text)[0]


def hidden_characters(text: str) -> list[str]:
    """Invisible characters of *text* that its script does not need, each once, in the
    order they first occur (a Persian non-joiner or a Khmer word space is not listed,
    see :mod:`hermes_memory_builtin.orthography`)."""
    if INVISIBLE_CHARS.isdisjoint(text):
        return []
    found = [(match.start(), match.group()) for match in _INVISIBLE.finditer(text)]
    needed = needed_positions(text, [index for index, _ in found])
    return list(dict.fromkeys(char for index, char in found if index not in needed))


def scan_for_threats(content: str, scope: str = "context") -> list[str]:
    """Ids of every threat found in *content* under *scope*.

    Invisible characters come first as ``invisible_unicode_U+XXXX`` in the
    order they occur, then pattern ids in catalogue order. Raises
    ``ValueError`` for an unknown scope.
    """
    _check_scope(scope)
    text = content[:MAX_SCAN_CHARS]
    found = [f"invisible_unicode_U+{ord(ch):04X}" for ch in hidden_characters(text)]
    found.extend(_matching_ids(text, scope))
    return found


def first_threat_message(content: str, scope: str = "strict") -> str | None:
    """A refusal message for the first threat in *content*, or ``None`` when clean."""
    _check_scope(scope)
    text = content[:MAX_SCAN_CHARS]
    invisible = hidden_characters(text)
    if invisible:
        return (
            f"Blocked: the content contains the invisible unicode character "
            f"U+{ord(invisible[0]):04X}, which can hide instructions from a reader. "
            "Remove it and retry."
        )
    ids = _matching_ids(text, scope)
    if not ids:
        return None
    return (
        f"Blocked: the content matches threat pattern '{ids[0]}'. Memory is injected into "
        "future system prompts, so it must not carry instructions to the model, "
        "exfiltration commands or secrets. Rephrase it as a plain fact."
    )
