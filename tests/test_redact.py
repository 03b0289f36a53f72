"""ascenv/redact.py: the one rule set of the probe and the report; every shape, the values that
must stay, and linear time."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv.redact import Known, Redactor, is_host_name, is_secret_name, mask, without_pem

PEM_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"


def redacted(text: str) -> str:
    """``text`` as a report bundle holds it."""
    redactor = Redactor()
    redactor.discover_text(text)
    return redactor.apply_text(text)


def pem(kind: str, end: bool = True) -> str:
    block = f"-----BEGIN {kind}-----\n{PEM_BODY}\nAAAAB3NzaC1yc2EAAAADAQABAAABAQC7\n"
    return block + (f"-----END {kind}-----\n" if end else "")


# (text, the secret in it): each shape of the README's table, and variants of it
SHAPES = [
    # private keys, whatever the algorithm, also cut short
    ("version=1\n" + pem("OPENSSH PRIVATE KEY") + "arch=aarch64\n", PEM_BODY),
    (pem("RSA PRIVATE KEY"), PEM_BODY),
    (pem("ENCRYPTED PRIVATE KEY"), PEM_BODY),
    (pem("PRIVATE KEY"), PEM_BODY),
    (pem("PGP PRIVATE KEY BLOCK"), PEM_BODY),
    ("load_priority=customize\n" + pem("EC PRIVATE KEY", end=False), PEM_BODY),
    # any label that says private, secret or a key that is not public; CRLF and indented blocks
    (pem("DSA PRIVATE KEY").replace("\n", "\r\n"), PEM_BODY),
    ("key: |\n  " + pem("OPENSSH PRIVATE KEY").replace("\n", "\n  "), PEM_BODY),
    (pem("OpenVPN Static key V1"), PEM_BODY),
    (pem("TSS2 PRIVATE KEY"), PEM_BODY),
    (pem("RSA PRIVATE KEY").replace("\n", "\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,8E2A\n\n", 1), PEM_BODY),
    (f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{PEM_BODY}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n", PEM_BODY),
    # names that say credential
    ("ASCEND_PASS=PlainPass123456", "PlainPass123456"),
    ("ASCEND_PWD=PlainPwd123456", "PlainPwd123456"),
    ("db_passwd: hunter2secret", "hunter2secret"),
    ("ASCEND_SIGNING=SigningValue42", "SigningValue42"),
    ("client_secret = 'cl1ent-s3cret'", "cl1ent-s3cret"),
    ('{"ASCEND_TOKEN": "t0k3n-value-123"}', "t0k3n-value-123"),
    ("ASCEND_KEY=k3y-value-123", "k3y-value-123"),
    ("GOOGLE_APPLICATION_CREDENTIALS_JSON=cr3d-value", "cr3d-value"),
    ("password=hunter2secret", "hunter2secret"),
    ("api_key: abcdef123456", "abcdef123456"),
    ("apiKey=abcdef123456", "abcdef123456"),
    # token shapes, standing alone
    ("fetched with AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("upload pypi-AgEIcHlwaS5vcmcCJGI1ZDJmYzQ3LWJh", "pypi-AgEIcHlwaS5vcmcCJGI1ZDJmYzQ3LWJh"),
    ("//registry/:_authToken=npm_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R", "npm_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"),
    ("ghp_" + "Q7xk2LmN9pRt4VwZ8bYc3DfGh6JkMn5Ps1Ab", "ghp_Q7xk2LmN9pRt4VwZ8bYc3DfGh6JkMn5Ps1Ab"),
    ("gho_" + "Q7xk2LmN9pRt4VwZ8bYc3DfGh6JkMn5Ps1Ab", "gho_Q7xk2LmN9pRt4VwZ8bYc3DfGh6JkMn5Ps1Ab"),
    ("github_pat_11ABCDEFG0123456789_abcdefXYZ", "github_pat_11ABCDEFG0123456789_abcdefXYZ"),
    ("hf_Q7xk2LmN9pRt4VwZ8bYc3DfGh6JkMn5Ps1", "hf_Q7xk2LmN9pRt4VwZ8bYc3DfGh6JkMn5Ps1"),
    ("sk-proj-Abc123Def456Ghi789Jkl0", "sk-proj-Abc123Def456Ghi789Jkl0"),
    ("key id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("ACL_AWS=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("slack xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF"),
    ("git clone https://oauth2:glpat-Abc123Def456Ghi789Jk@gitlab.example/x", "glpat-Abc123Def456Ghi789Jk"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "dozjgNryP4J3jVmNHl0w5N"),
    # HTTP headers, of several kinds
    ("Authorization: Basic dXNlcjpQYTU1dzByZA==", "dXNlcjpQYTU1dzByZA=="),
    ("Proxy-Authorization: Basic cHJveHk6c2VjcmV0", "cHJveHk6c2VjcmV0"),
    ("authorization=Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234"),
    ('curl -H "Authorization: token 0123456789abcdefABCD"', "0123456789abcdefABCD"),
    ("Bearer abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz012345"),
    ("X-Api-Key: 4f9a1c2e7b", "4f9a1c2e7b"),
    ("PRIVATE-TOKEN: Abc123Def456", "Abc123Def456"),
    # connection strings and command lines
    (
        "DefaultEndpointsProtocol=https;AccountName=ascend;AccountKey=Zm9vYmFyYmF6cXV4+/==;EndpointSuffix=core",
        "Zm9vYmFyYmF6cXV4+/==",
    ),
    ("Endpoint=sb://x/;SharedAccessKey=c2VjcmV0a2V5;", "c2VjcmV0a2V5"),
    ("mirror-sync --password Sup3rS3cret --verbose", "Sup3rS3cret"),
    ("mirror-sync --password=Sup3rS3cret", "Sup3rS3cret"),
    ("tool --api-token Sup3rS3cret", "Sup3rS3cret"),
    ("docker login -u builder -p Sup3rS3cret registry.example.invalid", "Sup3rS3cret"),
    # URL passwords holding '@' or '/'
    ("https://u:Pa@ssw0rdSecret99@mirror.example.invalid/simple", "ssw0rdSecret99"),
    ("https://u:ab/cdSecret99@mirror.example.invalid/simple", "cdSecret99"),
    ("https://deploy:Pa55w0rd@mirror.example.invalid/simple", "Pa55w0rd"),
    ("https://tok3nOnly123@mirror.example.invalid/", "tok3nOnly123"),
]


@pytest.mark.parametrize("text, secret", SHAPES, ids=[s for _, s in SHAPES])
def test_every_shape_is_hidden_in_a_bundle(text, secret):
    out = redacted(text)
    assert secret not in out and "<secret-1>" in out


@pytest.mark.parametrize("text, secret", SHAPES, ids=[s for _, s in SHAPES])
def test_every_shape_is_masked_by_the_probe(text, secret):
    assert secret not in mask(text) and "***" in mask(text)


def test_a_private_key_block_goes_whole_and_the_lines_around_it_stay():
    text = "version=8.0.0\n" + pem("OPENSSH PRIVATE KEY") + "arch=aarch64\n"
    assert redacted(text) == "version=8.0.0\n<secret-1>\narch=aarch64\n"


def test_the_host_of_a_url_is_found_after_a_password_holding_an_at_sign():
    text = "https://u:Pa@ssw0rdSecret99@mirror.example.invalid/simple"
    assert redacted(text) == "https://<secret-1>@<host-1>/simple"
    assert mask(text) == "https://***@mirror.example.invalid/simple"  # the probe masks secrets only


KEPT = [
    "firmware 7.7.0.1.231 driver 25.0.rc1.1 Version: 23.0.0.1",
    "toolkit 6.0.0.1.RC1 and 8.0.0.1.alpha001",  # four numbers then a tag: a version, not an address
    "PCIe Bus Info 0000:C1:00.0 and 0000:C2:00.0",
    'key = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
    "image = repo@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",  # sha1: 40 hex, not an AWS secret key
    "LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/common2AB:/x",  # 40 base64 characters, a path
    "Vulnerability Spec store bypass:    Not affected",  # corpus other_cmds/vllm-ascend_collect_env_...
    "tokenizers==0.19.1 passlib==1.7.4",
    "mkdir -p /usr/local/Ascend && ssh -p 2222 node",
    "echo $T | docker login --password-stdin -u builder",
    "tool --password-file /run/secrets/mirror",
    "this is basic information about a bearer of news",
    "ASCEND_OPP_PATH=/usr/local/Ascend/ascend-toolkit/latest/opp",
    "token=on password=",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUEXAMPLE\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----",
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQINBFxyz\n-----END PGP PUBLIC KEY BLOCK-----",
    # dotted names that are no host names: versions, file names, Python modules, Java packages
    "CANN 8.0.RC1.alpha001 with driver 25.0.rc1.1 and Ascend-cann-toolkit_8.0.RC1_linux-aarch64.run",
    "loaded libascendcl.so.8.0 and libascend_hal.so from /usr/local/Ascend/driver/lib64/driver",
    "File torch_npu/npu/utils.py in torch_npu.npu.utils: torch.nn.functional, torch.ao.nn, os.path.join",
    "op_info.ascend910b.json version.info setup.py set_env.sh model.om data.tar.gz Makefile.in",
    "at com.huawei.ascend.Runner.main(Runner.java:12) and org.apache.commons.io",
    "see http://localhost:8000/metrics and http://127.0.0.1:9090/ and http://[::1]:80/",
]


@pytest.mark.parametrize("text", KEPT)
def test_what_is_no_secret_stays(text):
    assert redacted(text) == text
    assert mask(text) == text


@pytest.mark.parametrize(
    "name, secret",
    [
        ("ASCEND_PASS", True),
        ("ASCEND_PWD", True),
        ("ASCEND_PASSWD", True),
        ("ASCEND_SIGNING", True),
        ("ACL_SECRET", True),
        ("ASCEND_TOKEN", True),
        ("ASCEND_KEY", True),
        ("ASCEND_CREDENTIALS", True),
        ("AccountKey", True),
        ("X-Api-Key", True),
        ("key", False),  # the build key of an ascenv build manifest: a digest
        ("ASCEND_BYPASS_CHECK", False),
        ("ASCEND_HOME_PATH", False),
        ("tokenizers", False),
    ],
)
def test_secret_names(name, secret):
    assert is_secret_name(name) is secret


def _seconds(text: str) -> float:
    start = time.perf_counter()
    redacted(text)
    mask(text)
    return time.perf_counter() - start


LONG_TOKENS = {
    "word": lambda n: "x" * n,
    "hex signature": lambda n: "sig=" + "ab" * (n // 2),
    "dotted": lambda n: "a." * (n // 2),
    "named secret": lambda n: "token=" + "A1" * (n // 2),
    "url userinfo": lambda n: "https://" + "u" * n + "@mirror.example.invalid",
    "dotted labels": lambda n: "a1." * (n // 3) + "x",
    "long label host": lambda n: "h" * n + ".corp.example.com",
    "url host": lambda n: "https://" + "a." * (n // 2) + "com:80/",
    "pem begin lines": lambda n: "-----BEGIN A-----" * (n // 17),
    "serial line": lambda n: "Serial Number: a" + " " * n + "b",
}


@pytest.mark.parametrize("shape", sorted(LONG_TOKENS))
def test_a_40000_character_token_takes_no_time(shape):
    # the backtracking rule took 173 s for one 40,000-character token
    assert _seconds(LONG_TOKENS[shape](40_000)) < 5


@pytest.mark.parametrize("shape", ["word", "named secret", "url userinfo"])
def test_time_is_linear_in_the_token_length_up_to_10_mb(shape):
    make = LONG_TOKENS[shape]
    small = min(_seconds(make(1_000_000)) for _ in range(2))
    large = _seconds(make(10_000_000))
    assert large < 30 * small + 1  # linear: ~10x; quadratic: ~100x


# host names, by kind: fully qualified names anywhere, and the host of every URL ----------------
HOSTS = [
    # (text, what must be hidden, what it becomes)
    (
        "ASCEND_PROXY=https://u:p@proxy.corp.example.com",
        ("u:p", "proxy.corp.example.com"),
        "https://<secret-1>@<host-1>",
    ),
    ("RuntimeError: connect to node7.cluster.example.com failed", ("node7.cluster.example.com",), "to <host-1> failed"),
    ("连接node7.corp.example.cn失败，请检查网络", ("node7.corp.example.cn",), "连接<host-1>失败"),
    ("HCCL 在 master.ai.example.org:29500 上超时", ("master.ai.example.org",), " <host-1>:29500 "),
    ("resolve xn--fsq.xn--0zwm56d.xn--fiqs8s", ("xn--fsq.xn--0zwm56d.xn--fiqs8s",), "resolve <host-1>"),
    ("mirror at mirrors.xn--fiqs8s.example.com/simple", ("mirrors.xn--fiqs8s.example.com",), "at <host-1>/simple"),
    ("NFS /mnt/nfs01.storage.example.net/datasets", ("nfs01.storage.example.net",), "/mnt/<host-1>/datasets"),
    ("mDNS name gpu-box.local answered", ("gpu-box.local",), "name <host-1> answered"),
    ("mail admin@smtp.mail.example.com now", ("smtp.mail.example.com",), "admin@<host-1> now"),
    ("https_proxy=http://squid:3128 no_proxy=.svc", ("squid",), "https_proxy=http://<host-1>:3128"),
    ("MASTER=http://[2001:db8::7]:8080/v1", ("2001:db8::7",), "http://[<ip-1>]:8080/v1"),
    (
        "git clone https://tok3nOnly123@git.example.com:8443/team/ops.git",
        ("tok3nOnly123", "git.example.com"),
        "https://<secret-1>@<host-1>:8443/team",
    ),
    ("pip install git+https://github.com/org/repo.git@v1.2", ("github.com",), "https://<host-1>/org/repo.git@v1.2"),
]


@pytest.mark.parametrize("text, hidden, shown", HOSTS, ids=[h[0] for h in HOSTS])
def test_host_names_and_url_hosts_are_hidden(text, hidden, shown):
    out = redacted(text)
    assert shown in out
    for value in hidden:
        assert value not in out


def test_a_single_label_url_host_is_hidden_only_as_a_url_host():
    """ "proxy" hidden in http://proxy:3128 must not turn https_proxy into https_<host-1>."""
    text = "https_proxy=http://proxy:3128/ and the proxy answered; proxy.py"
    assert redacted(text) == "https_proxy=http://<host-1>:3128/ and the proxy answered; proxy.py"


def test_the_same_host_is_one_placeholder_in_a_url_and_in_text():
    text = "https://u:p@proxy.corp.example.com:3128 then proxy.corp.example.com refused"
    assert redacted(text) == "https://<secret-1>@<host-1>:3128 then <host-1> refused"


def test_hosts_ascenv_cites_are_kept():
    redactor = Redactor()
    redactor.add_known(Known(public_hosts=("www.hiascend.com",)))
    text = "source: https://www.hiascend.com/document and www.hiascend.com; https://docs.corp.example.com/x"
    redactor.discover_text(text)
    assert (
        redactor.apply_text(text)
        == "source: https://www.hiascend.com/document and www.hiascend.com; https://<host-1>/x"
    )


@pytest.mark.parametrize(
    "name, host",
    [
        ("a.b.example.com", True),
        ("node7.local", True),
        ("x.y.xn--p1ai", True),
        ("a.b.de", True),
        ("example.com", False),  # a registrable domain alone names no machine
        ("torch.nn.functional", False),
        ("torch.ao.nn", False),  # nn is no country code
        ("libfoo.bar.so", False),
        ("model.v2.pt", False),
        ("8.0.rc", False),
        ("1.2.3.de", False),
        ("com.example.app", False),
    ],
)
def test_the_tld_shape_decides(name, host):
    assert is_host_name(name) is host


def test_a_pem_block_in_a_file_s_text_is_cut_before_it_is_parsed():
    text = "Version=25.0.rc1.1\n" + pem("EC PRIVATE KEY").replace("\n", "\r\n") + "arch=aarch64\n"
    assert without_pem(text) == "Version=25.0.rc1.1\n***\r\narch=aarch64\n"
    certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    assert without_pem(certificate) == certificate


# property: version strings, file names and Python module paths are never taken for host names --
_DOTTED_QUAD = re.compile(r"(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)")
_NUMBER = st.integers(0, 999).map(str)
_VERSION = st.builds(
    lambda parts, tag: ".".join(parts) + tag,
    st.lists(_NUMBER, min_size=2, max_size=5),
    st.sampled_from(["", ".RC1", ".rc1.1", ".RC1.alpha001", ".T63", ".B094", ".post1", ".dev0"]),
).filter(lambda v: not _DOTTED_QUAD.fullmatch(v))  # four numbers of at most 255 are an IPv4 address: masked as one
_WORD = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)
_FILE = st.builds(
    lambda stem, ext, tail: f"{stem}.{ext}{tail}",
    st.lists(_WORD, min_size=1, max_size=3).map("_".join),
    st.sampled_from(["so", "py", "sh", "om", "pt", "info", "run", "json", "toml", "cfg", "txt", "log", "tar.gz"]),
    st.sampled_from(["", ".8", ".8.0", ".1.2.3"]),
)
_MODULE = st.builds(lambda words: "torch_npu." + ".".join(words), st.lists(_WORD, min_size=1, max_size=4))


@given(st.lists(st.one_of(_VERSION, _FILE, _MODULE), min_size=1, max_size=6))
def test_versions_file_names_and_modules_are_no_hosts(words):
    text = " ".join(words) + "\n" + "/usr/local/Ascend/" + "/".join(words)
    assert redacted(text) == text
