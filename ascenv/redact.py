"""Redaction: the one rule set for what may not leave the machine as read. The probe uses it to
drop variables named like credentials and to mask secrets in the values it records
(``is_secret_name``, ``mask``); ``ascenv report`` uses it to replace every personal value of a
bundle by a stable placeholder (``Redactor``).

Every pattern here runs in time linear in its input: a pattern that starts with a
variable-length run is anchored by a look-behind at the start of that run, so Python's
backtracking engine never retries it from every position inside a long token (the failure mode
of https://owasp.org/www-community/attacks/Regular_expression_Denial_of_Service_-_ReDoS).
Values are found by key name *and* by shape (vllm-ascend's collect_env drops secret-looking
*names* but still prints values and URLs).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Optional

KINDS = ("host", "user", "ip", "serial", "secret")
_KIND_WORDS = {
    "host": "host name",
    "user": "user name",
    "ip": "IP address",
    "serial": "serial number",
    "secret": "secret",
}
MASK = "***"  # what the probe records in place of a secret
_PLACEHOLDER = re.compile(r"<(?:host|user|ip|serial|secret)-\d+>|\*{3}")

# --- names ------------------------------------------------------------------------------------

# Words of a variable, key, header or option name that say its value is a credential (vllm-ascend's
# collect_env drops names with secret/token/api/access/password). Whole words only, so that
# "bypass", "passthrough" or "tokenizers" are not caught.
_SECRET_WORDS = frozenset(
    "secret secrets token tokens password passwords passwd pass pwd passphrase credential credentials "
    "apikey auth authorization sign signing signature cookie".split()
)
# "key" counts after another word (API_KEY, AccountKey, X-Api-Key, ASCEND_KEY); a field called just
# "key" is the build key of an ascenv build manifest, a sha256 digest.
_KEY_WORDS = frozenset({"key", "keys"})
# A name whose last word says its value is where the secret is, not the secret (--password-file PATH,
# --password-stdin, TOKEN_PATH=/run/secrets/x).
_POINTER_WORDS = frozenset({"file", "path", "dir", "stdin", "env", "fd"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# Values too plain to be anyone's secret, which replaced everywhere would garble the bundle.
_PLAIN_VALUES = frozenset("true false yes no on off none null unset enabled disabled".split())


def name_words(name: str) -> tuple[str, ...]:
    """``ASCEND_API_TOKEN`` -> (ascend, api, token); ``AccountKey`` -> (account, key)."""
    return tuple(w.lower() for w in _WORD.findall(name))


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a variable, key, header or option called ``name`` holds a credential."""
    words = name_words(name)
    if _SECRET_WORDS.intersection(words):
        return True
    return len(words) > 1 and bool(_KEY_WORDS.intersection(words))


def _names_a_secret_value(name: str) -> bool:
    words = name_words(name)
    return is_secret_name(name) and not (words and words[-1] in _POINTER_WORDS)


def _worth_hiding(value: str) -> bool:
    return len(value) >= 3 and value.lower() not in _PLAIN_VALUES and not _PLACEHOLDER.fullmatch(value)


# --- values -----------------------------------------------------------------------------------

# PEM blocks (RFC 7468 §2: "-----BEGIN label-----" ... "-----END label-----", the label printable
# ASCII but "-", words parted by one space; RFC 4716's SSH2 keys as "---- BEGIN SSH2 ... ----"): the
# whole block goes when its label says it holds a secret, since its body lines have no name and no
# known shape. By kind, not by example: any label with PRIVATE or SECRET (RFC 7468 §10-11 "PRIVATE
# KEY", "ENCRYPTED PRIVATE KEY"; "RSA/EC/DSA/OPENSSH PRIVATE KEY"; RFC 4880 §6.2 "PGP PRIVATE KEY
# BLOCK"), and any other KEY that is not PUBLIC ("OpenVPN Static key V1", a shared secret).
# Certificates, CSRs, CRLs, public keys and parameters stay: they are public.
_PEM_BEGIN = re.compile(r"(?P<dashes>-{4,5}) ?BEGIN (?P<label>[!-,.-~]{1,40}(?: [!-,.-~]{1,40}){0,7}) ?-{4,5}")
_SECRET_LABEL_WORDS = frozenset({"PRIVATE", "SECRET"})


def _secret_label(label: str) -> bool:
    words = set(label.upper().split())
    return bool(words & _SECRET_LABEL_WORDS) or ("KEY" in words and "PUBLIC" not in words)


def pem_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where the secret PEM blocks of ``text`` are, BEGIN to END line, in order (a block cut short
    runs to the end of the text: a truncated key is still a key). CRLF lines and indentation
    (a key pasted into YAML) change nothing: only the BEGIN and END lines are read."""
    if "begin " not in text.lower():
        return
    position = 0
    while True:
        match = _PEM_BEGIN.search(text, position)
        if match is None:
            return
        label = match.group("label")
        if not _secret_label(label):
            position = match.end()
            continue
        end = text.find(f"END {label}", match.end())
        if end < 0:
            yield match.start(), len(text)
            return
        end += len(f"END {label}")
        while end < len(text) and text[end] in " -":
            end += 1
        yield match.start(), end
        position = end


def without_pem(text: str) -> str:
    """``text`` with each secret PEM block (``pem_spans``) replaced by ``***``: for a file whose
    text the probe parses into fields (``version.info``), where the block's lines would otherwise
    become fields of their own, out of reach of any per-value rule."""
    return _masked(text, list(pem_spans(text)))


# Token shapes of the services Ascend users paste into their environment, each by its documented
# prefix: GitHub (ghp_/gho_/ghu_/ghs_/ghr_, github_pat_), Hugging Face (hf_), OpenAI-style (sk-),
# GitLab (glpat-), AWS access key IDs (AKIA/ASIA), Slack (xoxb-/xoxp-/...), Google API keys (AIza),
# PyPI upload tokens (pypi-), npm (npm_), and JWTs (eyJ...).
_TOKEN_SHAPES = re.compile(
    # each prefix comes first, so the engine skips ahead to it; the look-behind after it (the
    # prefix again, behind a name character) says the token starts a word
    "|".join(
        rf"{prefix}(?<![\w-]{prefix}){body}(?![\w-])"
        for prefix, body in (
            (r"gh[pousr]_", r"[A-Za-z0-9]{30,}"),
            (r"github_pat_", r"[A-Za-z0-9_]{20,}"),
            (r"hf_", r"[A-Za-z0-9]{30,}"),
            (r"sk-", r"[A-Za-z0-9_-]{20,}"),
            (r"glpat-", r"[A-Za-z0-9_-]{20,}"),
            (r"A[KS]IA", r"[0-9A-Z]{16}"),
            (r"xox[abposr]-", r"[A-Za-z0-9-]{10,}"),
            (r"AIza", r"[0-9A-Za-z_-]{30,}"),
            (r"pypi-", r"[A-Za-z0-9_-]{16,}"),
            (r"npm_", r"[A-Za-z0-9]{30,}"),
            (r"eyJ", r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        )
    )
)
# An AWS secret access key: 40 characters of base64 alphabet, standing alone. Required to mix
# upper case, lower case and digits so that hex digests (sha1 is 40 hex) are not taken for one.
_BASE64_40 = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
# HTTP credentials (RFC 9110 §11.6.2 Authorization, §11.7.2 Proxy-Authorization): the value after
# the scheme word (Basic, Bearer, ...) is the secret; a bearer token anywhere else too.
_AUTHORIZATION = re.compile(
    r"(?i)(?<![\w-])(?:proxy-)?authorization[\"']?[ \t]*[=:][ \t]*[\"']?"
    r"(?:(?:basic|bearer|token|digest|negotiate)[ \t]+)?(?P<value>[^\s\"'&;,]+)"
)
_BEARER = re.compile(r"(?i)(?<![\w-])bearer[ \t]+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)")
# name=value, name: value, "name": "value", --name value, --name=value; the name is read whole
# (the look-behind starts it at the beginning of a run of name characters) and then judged.
_ASSIGNMENT = re.compile(r"(?<![\w.-])(?P<name>[\w.-]+)[\"']?[ \t]*[=:](?![=:/])[ \t]*[\"']?(?P<value>[^\s\"'&;,]+)")
_OPTION = re.compile(r"(?<![\w-])--(?P<name>[A-Za-z][\w-]*)(?:=|[ \t]+)(?P<value>[^\s\"'-][^\s\"']*)")
# "-u USER -p PASSWORD" (docker/podman/helm login, mysql): -p alone is a port or "parents" elsewhere.
_USER_PASSWORD = re.compile(r"(?<!\S)-u[ \t]+\S+[ \t]+-p[ \t]*(?P<value>[^\s\"'-][^\s\"']*)")
_URL = re.compile(r"://(?P<rest>[^\s\"'<>]*)")


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where the secrets of ``text`` are, as sorted, non-overlapping (start, end) spans."""
    spans = list(_raw_spans(text))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _raw_spans(text: str) -> Iterator[tuple[int, int]]:
    lowered = text.lower()  # a pattern runs only when the word it needs is in the text at all
    yield from pem_spans(text)
    if "://" in text:
        for match in _URL.finditer(text):
            userinfo = _userinfo(match.group("rest"))
            if userinfo:
                yield match.start("rest"), match.start("rest") + len(userinfo)
    for match in _TOKEN_SHAPES.finditer(text):
        yield match.span()
    for match in _BASE64_40.finditer(text):
        token = match.group(0)
        if token.startswith("/"):
            continue  # an absolute path such as /usr/local/Ascend/driver/lib64/..., not a key
        if any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token):
            yield match.span()
    for word, pattern in (("authorization", _AUTHORIZATION), ("bearer", _BEARER), ("-u", _USER_PASSWORD)):
        if word in lowered:
            for match in pattern.finditer(text):
                if _worth_hiding(match.group("value")):
                    yield match.span("value")
    for needed, pattern in ((("=", ":"), _ASSIGNMENT), (("--",), _OPTION)):
        if not any(n in text for n in needed):
            continue
        for match in pattern.finditer(text):
            name = match.group("name")
            if "authorization" in name_words(name):
                continue  # its first word is the scheme (Basic, Bearer): _AUTHORIZATION takes the value
            if _names_a_secret_value(name) and _worth_hiding(match.group("value")):
                yield match.span("value")


def _userinfo(rest: str) -> str:
    """The ``user:password`` of a URL from what follows its ``://``. RFC 3986 §3.2 forbids a raw
    ``@`` in userinfo and ends the authority at the first ``/``, but pasted passwords hold both:
    the userinfo ends at the *last* ``@`` of the authority, and a ``user:pass/word@host`` whose
    ``@`` comes after a ``/`` is taken whole when a ``:`` precedes that ``/``."""
    authority_end = len(rest)
    for delimiter in "/?#":
        found = rest.find(delimiter)
        if 0 <= found < authority_end:
            authority_end = found
    at = rest.rfind("@", 0, authority_end)
    if at < 0 and ":" in rest[:authority_end]:
        first = rest.find("@", authority_end)
        if first >= 0:
            after = rest.find("/", first)
            at = rest.rfind("@", 0, after if after >= 0 else len(rest))
    return rest[:at] if at > 0 else ""


def url_host(rest: str) -> tuple[int, int]:
    """Where the host of a URL is in ``rest``, what follows its ``://``: after the userinfo
    (``_userinfo``), up to a port, a path, a query or a fragment. An IPv6 literal (RFC 3986
    §3.2.2, ``[2001:db8::1]``) is given without its brackets. (start, start) when there is none."""
    userinfo = _userinfo(rest)
    start = len(userinfo) + 1 if userinfo else 0
    if rest.startswith("[", start):
        end = rest.find("]", start)
        return (start + 1, end) if end > start else (start, start)
    match = _URL_HOST.match(rest, start)
    return (start, match.end()) if match else (start, start)


def url_hosts(text: str) -> set[str]:
    """The host of every URL in ``text``."""
    found = set()
    for match in _URL.finditer(text):
        start, end = url_host(match.group("rest"))
        if end > start:
            found.add(match.group("rest")[start:end])
    return found


_URL_HOST = re.compile(r"[A-Za-z0-9_.~%-]+")
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def mask(text: str) -> str:
    """``text`` with every secret ``secret_spans`` finds replaced by ``***``."""
    return _masked(text, secret_spans(text))


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of the sorted, non-overlapping ``spans`` replaced by ``***``."""
    if not spans:
        return text
    parts, last = [], 0
    for start, end in spans:
        parts += [text[last:start], MASK]
        last = end
    parts.append(text[last:])
    return "".join(parts)


# --- the bundle redactor ------------------------------------------------------------------------

# Words too common to replace wherever they appear: a user called "dev" must not turn /dev/davinci0
# into /<user-1>/davinci0. Such names are still replaced in home paths and in their own field.
_COMMON = frozenset(
    "root dev sys proc usr bin sbin lib lib64 etc tmp var opt home local share data user users admin test "
    "work build src app docker ubuntu debian centos openeuler kylin linux localhost ascend hwhiaiuser "
    "driver firmware cann python torch npu".split()
)
_HOST_ASSIGNMENT = re.compile(
    r"(?im)(?<![\w-])host[-_ ]?name[\"']?[ \t]*[=:][ \t]*[\"']?(?P<value>[A-Za-z0-9][A-Za-z0-9.-]*)"
)
# npu-smi info -t board prints "Serial Number : 1000000000" (corpus npu_smi/from_ascend_deployer_5.txt)
_SERIAL_LINE = re.compile(
    r"(?im)^[ \t]*(?:serial[ _]?number|uuid|vdie[ _]?id)[ \t]*[:=][ \t]*(?P<value>[^\s](?:[^\r\n]*[^\s])?)[ \t]*$"
)
# not followed by ".<digit or letter>": 7.5.0.1.129 and 6.0.0.1.RC1 are versions; "at 10.0.0.1." is an address
_IPV4 = re.compile(
    r"(?<![\w.])(?P<value>(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))(?!\w|\.\w)"
)
_IPV6 = re.compile(r"(?<![\w:.])(?P<value>[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?![\w:])")
# Fully qualified host names (RFC 1123 §2.1 / RFC 952 labels: letters, digits and inner hyphens,
# at most 63 characters each), standing alone: not inside a longer token of name characters, so
# neither a piece of ``torch_npu.npu.utils`` nor of ``op_info.ascend910b.json``. Boundaries are ASCII
# only: in Chinese text a name touches the characters around it ("连接node7.corp.example.com失败").
_FQDN = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<value>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,126}"
    r"(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59}))(?![A-Za-z0-9_-]|\.[A-Za-z0-9])"
)
# What a name must end in to be taken for a host, the "TLD shape" (RFC 1123 §2.1: a top-level label
# is alphabetic): a punycode IDN TLD (xn--, RFC 5890), an ISO 3166-1 country code (the ccTLDs), one
# of the generic TLDs hosts are met under, or a suffix of private networks (RFC 6762 .local, RFC
# 8375 home.arpa, RFC 2606 .example/.invalid, ICANN's .internal, and corp/lan/intranet by custom).
# Not a free alphabetic label: os.path.join, torch.nn.functional and setup.py must stay.
_COUNTRY_TLDS = frozenset(
    "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bw by bz "
    "ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi fj fk fm "
    "fo fr ga gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it "
    "je jm jo jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn "
    "mo mp mq mr ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps "
    "pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st su sv sx sy sz tc td tf tg th tj "
    "tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw".split()
)
# Country codes that are also file extensions met on an Ascend machine (libascendcl.so, setup.py,
# set_env.sh, a .om model, a .pt checkpoint, Makefile.in/.am, a .ms MindSpore model): a name ending
# in one is a file before it is a host.
_FILE_EXTENSIONS = frozenset("so py sh om pt ms md mk in am ac pl pm ps cc rs ml mo la ir".split())
_GENERIC_TLDS = frozenset(
    "com net org edu gov mil int biz name pro asia mobi app dev cloud tech site online xyz top club shop "
    "store link live news blog wiki space website systems network services group team work company global "
    "digital zone host email tools software".split()
)
_PRIVATE_SUFFIXES = frozenset("local localdomain internal intranet corp lan home arpa example invalid private".split())
# Reverse-DNS names of Java and Android packages (com.huawei.ascend.Runner) are not hosts.
_REVERSE_DNS = frozenset({"com", "org", "net"})


def is_host_name(name: str) -> bool:
    """Whether a dotted ``name`` (one ``_FQDN`` match) is taken for a fully qualified host name:
    it ends in a TLD shape (above) after a label with a letter (not ``8.0.rc``), and has three
    labels or more (``a.b.example.com``; two for a private suffix: ``node7.local``)."""
    labels = name.rstrip(".").split(".")
    tld = labels[-1].lower()
    if len(labels) < 2 or not any(c.isalpha() for c in labels[-2]) or labels[0].lower() in _REVERSE_DNS:
        return False
    if tld in _PRIVATE_SUFFIXES:
        return True
    if len(labels) < 3:
        return False
    if tld.startswith("xn--") or tld in _GENERIC_TLDS:
        return True
    return tld in _COUNTRY_TLDS and tld not in _FILE_EXTENSIONS


_HOME = re.compile(r"(?<![\w.-])(?P<base>/home|/Users|/export/home)/(?P<user>[^/\s:\"'<>]+)")


@dataclass(frozen=True)
class Known:
    """Personal values the caller knows of besides those in the data (from its environment)."""

    hostnames: tuple[str, ...] = ()
    homes: tuple[str, ...] = ()  # home directories, e.g. $HOME
    users: tuple[str, ...] = ()  # $USER, $LOGNAME
    # hosts ascenv itself cites (the sources of its compatibility data and error signatures): public
    # documentation, kept so that a finding's or a cause's source still says where it comes from
    public_hosts: tuple[str, ...] = ()


class Redactor:
    """Replace personal values by placeholders, the same one for the same value everywhere.

    Two passes over all members: ``discover`` learns the values (by key name and by pattern),
    ``apply`` replaces them, so a serial found in the snapshot is also hidden in a raw capture.
    Placeholders are numbered in discovery order, which the caller keeps fixed."""

    def __init__(self) -> None:
        self._by_value: dict[str, str] = {}  # a value -> what replaces it
        self._ids: dict[tuple[str, str], str] = {}  # (kind, identity) -> placeholder
        self._per_kind: dict[str, int] = {}
        self._pattern: Optional[re.Pattern[str]] = None
        self._long: list[str] = []  # values too long for the pattern, longest first
        self._public: frozenset[str] = frozenset()  # host names never hidden (Known.public_hosts)

    @property
    def counts(self) -> dict[str, int]:
        return {kind: self._per_kind[kind] for kind in KINDS if self._per_kind.get(kind)}

    def _placeholder(self, kind: str, identity: str) -> str:
        key = (kind, identity)
        if key not in self._ids:
            self._per_kind[kind] = self._per_kind.get(kind, 0) + 1
            self._ids[key] = f"<{kind}-{self._per_kind[kind]}>"
        return self._ids[key]

    def add(self, kind: str, value: str) -> str:
        """Learn ``value``; a common word (``_COMMON``) is only replaced where its name says what it is."""
        value = value.strip()
        if not value or _PLACEHOLDER.fullmatch(value):
            return value
        placeholder = self._placeholder(kind, value)
        if value.lower() not in _COMMON:
            self._by_value.setdefault(value, placeholder)
            self._pattern = None
        return placeholder

    def add_home(self, home: str) -> None:
        home = home.rstrip("/")
        if "/" not in home or home in ("", "/root") or _PLACEHOLDER.search(home):
            return
        base, user = home.rsplit("/", 1)
        if not user:
            return
        self._by_value.setdefault(home, f"{base}/{self.add('user', user)}")
        self._pattern = None

    def add_known(self, known: Known) -> None:
        self._public = frozenset(h.lower() for h in known.public_hosts)
        for host in known.hostnames:
            self.add_host(host)
        for home in known.homes:
            self.add_home(home)
        for user in known.users:
            if user != "root":
                self.add("user", user)

    def add_host(self, host: str) -> None:
        if host and host != "localhost":
            placeholder = self.add("host", host)
            short = host.split(".")[0]
            if short != host and short.lower() not in _COMMON:  # node7.cluster.local is also "node7"
                self._by_value.setdefault(short, placeholder)

    # pass 1 ---------------------------------------------------------------------------------
    def discover(self, data: Any, path: tuple[str, ...] = ()) -> None:
        if isinstance(data, dict):
            for k, v in data.items():
                self.discover(v, (*path, str(k)))
        elif isinstance(data, list):
            for v in data:
                self.discover(v, path)
        elif isinstance(data, str):
            kind = _kind_by_name(path)
            if kind == "host":
                self.add_host(data)
            elif kind is not None:
                self.add(kind, data)
            else:
                self.discover_text(data, ips=not _holds_versions(path))

    def discover_text(self, text: str, *, ips: bool = True) -> None:
        lowered = text.lower()  # a pattern runs only when the word it needs is in the text at all
        if any(base in text for base in ("/home/", "/Users/", "/export/home/")):
            for match in _HOME.finditer(text):
                self.add_home(match.group(0))
        for start, end in secret_spans(text):
            self.add("secret", text[start:end])
        if "host" in lowered:
            for match in _HOST_ASSIGNMENT.finditer(text):
                self.add_host(match.group("value"))
        if "://" in text:
            for match in _URL.finditer(text):
                start, end = url_host(match.group("rest"))
                self._add_url_host(match.group("rest")[start:end])
        if ips and "." in text:
            for match in _FQDN.finditer(text):
                name = match.group("value").rstrip(".")
                if is_host_name(name) and name.lower() not in self._public:
                    self.add("host", name)
        if any(word in lowered for word in ("serial", "uuid", "vdie")):
            for match in _SERIAL_LINE.finditer(text):
                self.add("serial", match.group("value"))
        if ips and "." in text:
            version_lines = _VersionLines(text)
            for match in _IPV4.finditer(text):
                if not version_lines.holds(match.start()):
                    self._add_ip(match.group("value"))
        if ips and ":" in text:
            for match in _IPV6.finditer(text):
                value = match.group("value")
                if "::" in value or value.count(":") == 7:
                    self._add_ip(value)

    def _add_url_host(self, host: str) -> None:
        """A URL's host, whatever its shape (``proxy``, an FQDN, an IP address); loopback stays.
        A single-label name is replaced only as a URL's host (``apply_text``): "proxy" or "mirror"
        is also a word of the text around it (``https_proxy``)."""
        host = host.rstrip(".")
        if not host or host.lower() in _LOOPBACK_NAMES | self._public or _PLACEHOLDER.search(host):
            return
        try:
            ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            self._add_ip(host)
            return
        if "." in host:
            self.add("host", host)
        else:
            self._placeholder("host", host)

    def _add_ip(self, value: str) -> None:
        if value in self._by_value:
            return  # seen: a log repeats its peer's address on every line
        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            return
        if not (address.is_loopback or address.is_unspecified):  # 127.0.0.1 says nothing about anyone
            self.add("ip", value)

    # pass 2 ---------------------------------------------------------------------------------
    def apply(self, data: Any, path: tuple[str, ...] = ()) -> Any:
        if isinstance(data, dict):
            return {k: self.apply(v, (*path, str(k))) for k, v in data.items()}
        if isinstance(data, list):
            return [self.apply(v, path) for v in data]
        if isinstance(data, str):
            kind = _kind_by_name(path)
            if kind is not None and data.strip() and not _PLACEHOLDER.fullmatch(data.strip()):
                return self._ids.get((kind, data.strip()), self.apply_text(data))
            return self.apply_text(data)
        return data

    def apply_text(self, text: str) -> str:
        if "://" in text and self._ids:
            text = _URL.sub(self._hide_url_host, text)
        if not self._by_value:
            return text
        if self._pattern is None:
            values = sorted(self._by_value, key=lambda v: (-len(v), v))  # longest first: /home/al before al
            self._long = [v for v in values if len(v) > _LONG_VALUE]
            short = [re.escape(v) for v in values if len(v) <= _LONG_VALUE] or ["(?!)"]
            # a value counts only as a whole token: 10.0.0.1 is not hidden inside 10.0.0.12 or
            # inside the version 7.10.0.0.1, and a serial not inside a longer number
            self._pattern = re.compile(r"(?<![A-Za-z0-9])(?<!\d\.)(?:" + "|".join(short) + r")(?![A-Za-z0-9]|\.\d)")
        pattern = self._pattern
        # long values (a PEM block, a pasted token) are found with str.find: compiling them into
        # the pattern costs time in proportion to their length in pure Python (sre_parse)
        pieces: list[tuple[str, bool]] = [(text, False)]
        for value in self._long:
            pieces = [part for piece in pieces for part in _split_on(piece, value, self._by_value[value])]
        return "".join(
            piece if done else pattern.sub(lambda m: self._by_value[m.group(0)], piece) for piece, done in pieces
        )

    def _hide_url_host(self, match: re.Match[str]) -> str:
        """A URL with its host replaced when it was learned (``_add_url_host``); before the
        values, so that the host is still found after its userinfo."""
        rest = match.group("rest")
        start, end = url_host(rest)
        placeholder = self._ids.get(("host", rest[start:end].rstrip(".")))
        if placeholder is None:
            return match.group(0)
        return f"://{rest[:start]}{placeholder}{rest[end:]}"


_LONG_VALUE = 256


def _split_on(piece: tuple[str, bool], value: str, placeholder: str) -> Iterator[tuple[str, bool]]:
    """``piece`` cut around each whole-token occurrence of ``value``, which becomes ``placeholder``."""
    text, done = piece
    if done:
        yield piece
        return
    last = 0
    found = text.find(value)
    while found >= 0:
        end = found + len(value)
        before = text[max(0, found - 2) : found]
        after = text[end : end + 2]
        whole = not (before[-1:].isalnum() and before[-1:].isascii()) and not re.fullmatch(r"\d\.", before)
        whole = whole and not (after[:1].isalnum() and after[:1].isascii()) and not re.fullmatch(r"\.\d", after)
        if whole:
            yield text[last:found], False
            yield placeholder, True
            last = end
            found = text.find(value, end)
        else:
            found = text.find(value, found + 1)
    yield text[last:], False


class _VersionLines:
    """Whether a position is on a line that talks of a version. npu-smi's header prints
    "npu-smi 23.0.0.1   Version: 23.0.0.1" in the table header of every layout: a dotted quad
    there is a version. Positions are asked in increasing order, so each line is looked at once."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._end = -1
        self._answer = False

    def holds(self, position: int) -> bool:
        if position > self._end:
            start = self._text.rfind("\n", 0, position) + 1
            end = self._text.find("\n", position)
            self._end = end if end >= 0 else len(self._text)
            self._answer = "version" in self._text[start : self._end].lower()
        return self._answer


def describe_redactions(counts: dict[str, int]) -> str:
    """``{"user": 1, "ip": 2}`` -> ``1 user name, 2 IP addresses`` (counts, never values)."""
    words = {"address": "addresses"}
    parts = []
    for kind, n in counts.items():
        word = _KIND_WORDS[kind]
        if n > 1:
            last = word.split()[-1]
            word = word[: -len(last)] + words.get(last, last + "s")
        parts.append(f"{n} {word}")
    return ", ".join(parts)


def _kind_by_name(path: tuple[str, ...]) -> Optional[str]:
    """What a field's *name* says its value is; None when only its value can tell. Package
    names are no field names: ``tokenizers`` or ``uuid`` map to versions, not secrets."""
    if not path or "packages" in path:
        return None
    words = name_words(path[-1])
    if words == ("hostname",) or words == ("host", "name"):
        return "host"
    if {"serial", "uuid"}.intersection(words) or ("die" in words and "id" in words):
        return "serial"
    if is_secret_name(path[-1]):
        return "secret"
    return None


def _holds_versions(path: tuple[str, ...]) -> bool:
    # "7.7.0.1" could be an IPv4 address, but under "version", "Firmware Version",
    # "compiler_version" or in a package table it is a version
    return bool(path) and ("packages" in path or re.sub(r"[^a-z]", "", path[-1].lower()).endswith("version"))
