"""What the Misskey stand-in exchanged, type-checked against Misskey's published API.

No Misskey installs here, so ``tests/support/misskey.py`` stands in for one; what keeps it
honest is npm ``misskey-js``, the TypeScript client Misskey publishes with every release,
whose ``Endpoints`` type says what each endpoint takes and answers. The stand-in records
every ``/api/`` exchange (the body as anonbox sent it, the answer as the stand-in gave it);
this module writes them out as TypeScript, one ``satisfies`` per request and per answer,
and runs ``tsc --noEmit --strict`` on that file against misskey-js's types. ``satisfies``
checks an object literal for missing and wrongly typed fields and for fields the type
does not have, so a field anonbox misspells, a value Misskey does not take, or an answer
the stand-in gives that Misskey never would all fail the check.

misskey-js and TypeScript are dev dependencies of ``tests/support/misskey-js``
(``package.json``, pinned exactly, and ``package-lock.json``), installed on first use with
``npm ci`` into its ``node_modules`` (ignored by git), as the Fedify peer is. The file and
its ``tsconfig.json`` go to a temporary directory, never into the tree.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.support.misskey import Exchange

PACKAGE = Path(__file__).resolve().parent / "misskey-js"
_CACHE = Path(os.environ.get("ANONBOX_TEST_PEERS", Path.home() / ".cache" / "anonbox-tests"))
# The credential is shown as this, not as the token the test's stand-in issued.
TOKEN = "(the token)"
MIAUTH_CHECK = "miauth/{session}/check"

PRELUDE = """\
// What the Misskey stand-in (tests/support/misskey.py) received from anonbox and answered,
// exchange by exchange, as the tests ran; checked with `tsc --noEmit --strict` against
// misskey-js@{version}'s types (written by tests/support/misskey_types.py).
import type {{ Endpoints, entities, api }} from 'misskey-js';
import type {{ operations }} from 'misskey-js/autogen/types.js';

// misskey-js's APIClient adds the credential to every request body as `i`.
type Credential = {{ i: string }};
// Misskey's error body: the OpenAPI `Error` (message, code, id), with the `kind` and the
// optional `info` that its ApiCallService adds and misskey-js's `APIError` reads.
type MisskeyError = {{
  error: entities.Error['error'] & Pick<api.APIError, 'kind'> & Partial<Pick<api.APIError, 'info'>>;
}};
// POST /api/miauth/{{session}}/check is a route of Misskey's ApiServerService, not an endpoint,
// so misskey-js does not type it: Misskey ignores its body and answers with the user packed
// as `UserDetailedNotMe`, once (`ok: false` afterwards and for a session nobody allowed).
type MiauthCheckRequest = Record<string, never>;
type MiauthCheckResponse =
  | {{ ok: true; token: string; user: entities.UserDetailedNotMe }}
  | {{ ok: false }};
"""

TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "noEmit": True,
        "target": "es2023",
        "module": "nodenext",
        "moduleResolution": "nodenext",
        # misskey-js's types name the DOM's Blob and fetch types.
        "lib": ["es2023", "dom"],
        "types": [],
    },
    "files": ["recorded.mts"],
}


def pins() -> dict[str, str]:
    """The exact versions ``package.json`` pins (misskey-js, typescript)."""
    manifest = json.loads((PACKAGE / "package.json").read_text())
    return {name: str(version) for name, version in manifest["devDependencies"].items()}


def _installed() -> bool:
    for name, version in pins().items():
        manifest = PACKAGE / "node_modules" / name / "package.json"
        if not manifest.exists() or json.loads(manifest.read_text())["version"] != version:
            return False
    return True


def install() -> None:
    """``npm ci`` from the committed lockfile, once (one installer at a time: xdist)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise AssertionError("Node and npm are needed for misskey-js (tests/support/misskey-js)")
    _CACHE.mkdir(parents=True, exist_ok=True)
    with open(_CACHE / "misskey-js.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if _installed():
            return
        done = subprocess.run(
            # Dev dependencies even where NODE_ENV=production would leave them out.
            [npm, "ci", "--include=dev", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=PACKAGE,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0 or not _installed():
            raise AssertionError(f"npm ci of misskey-js failed:\n{done.stdout}\n{done.stderr}")


def _ts(value: Any, indent: str = "") -> str:
    """A JSON value as a TypeScript expression; ``{"$blob": {size, type}}`` as a Blob."""
    inner = indent + "  "
    if isinstance(value, dict):
        if set(value) == {"$blob"}:
            blob = value["$blob"]
            return (
                f"new Blob([new Uint8Array({int(blob['size'])})], "
                f"{{ type: {json.dumps(blob['type'])} }})"
            )
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {_ts(v, inner)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + "\n".join(f"{inner}{_ts(v, inner)}," for v in value) + f"\n{indent}]"
    return json.dumps(value, ensure_ascii=False)


def _request(exchange: Exchange) -> dict[str, Any]:
    request = dict(exchange.request)
    if isinstance(request.get("i"), str):
        request["i"] = TOKEN
    return request


def _response(exchange: Exchange) -> Any:
    answer = exchange.response
    if exchange.endpoint == MIAUTH_CHECK and isinstance(answer, dict) and "token" in answer:
        return answer | {"token": TOKEN}
    return answer


def typescript(exchanges: Iterable[Exchange]) -> str:
    """The recording as a TypeScript module of ``satisfies`` checks."""
    parts = [PRELUDE.format(version=pins()["misskey-js"])]
    for n, exchange in enumerate(exchanges):
        head = f"// [{n}] POST /api/{exchange.endpoint} -> {exchange.status}  ({exchange.test})"
        endpoint = exchange.endpoint
        if endpoint == MIAUTH_CHECK:
            request_type, answer_type = "MiauthCheckRequest", "MiauthCheckResponse"
        else:
            request_type = f"Endpoints[{json.dumps(endpoint)}]['req'] & Credential"
            answer_type = f"Endpoints[{json.dumps(endpoint)}]['res']"
        lines = [head, f"const q{n} = {_ts(_request(exchange))} satisfies {request_type};"]
        if not exchange.misskey:
            lines.append("// The answer is not checked: Misskey itself never gives it.")
        elif exchange.status == 200:
            lines.append(f"const a{n} = {_ts(_response(exchange))} satisfies {answer_type};")
        else:
            operation = json.dumps(endpoint.replace("/", "___"))
            lines.append(f"const a{n} = {_ts(_response(exchange))} satisfies MisskeyError;")
            # The status is one this endpoint declares.
            lines.append(
                f"const s{n}: keyof operations[{operation}]['responses'] = {exchange.status};"
            )
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def check(exchanges: list[Exchange], directory: Path) -> subprocess.CompletedProcess[str]:
    """Write the recording to ``directory`` and run ``tsc`` on it: the finished process."""
    install()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "recorded.mts").write_text(typescript(exchanges))
    (directory / "tsconfig.json").write_text(json.dumps(TSCONFIG, indent=2))
    modules = directory / "node_modules"
    if not modules.exists():
        modules.symlink_to(PACKAGE / "node_modules", target_is_directory=True)
    return subprocess.run(
        [
            str(PACKAGE / "node_modules" / ".bin" / "tsc"),
            "-p",
            str(directory / "tsconfig.json"),
            "--noEmit",
            "--strict",
            "--pretty",
            "false",
        ],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def assert_types_hold(exchanges: list[Exchange], directory: Path, endpoints: set[str]) -> None:
    """The recording holds ``endpoints`` (at least), and ``tsc`` exits 0 on it; otherwise
    its output, with each line of the recording it names."""
    seen = {e.endpoint for e in exchanges if e.misskey}
    assert endpoints <= seen, f"nothing recorded for {sorted(endpoints - seen)}: {sorted(seen)}"
    done = check(exchanges, directory)
    source = (directory / "recorded.mts").read_text().splitlines()
    named = []
    for line in done.stdout.splitlines():
        if line.startswith("recorded.mts("):
            n = int(line.split("(", 1)[1].split(",", 1)[0])
            head = next((h for h in reversed(source[:n]) if h.startswith("// [")), "")
            named.append(f"  {head}\n  {n}: {source[n - 1].strip()}")
    assert done.returncode == 0, (
        f"tsc found what Misskey's published API (misskey-js) does not allow in "
        f"{directory / 'recorded.mts'}:\n{done.stdout}{done.stderr}\n" + "\n".join(named)
    )
