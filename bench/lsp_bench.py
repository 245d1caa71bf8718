"""`trio-lint server` latency: from a `textDocument/didChange` to the `publishDiagnostics` of
that version, measured by a real LSP client (pygls) over stdio, printed as a table.

    .venv/bin/python bench/lsp_bench.py [--edits 40] [--lines 1000]

The document is real PyTRIO code (examples/ and the demo's buggy script, repeated up to
`--lines` lines), so every lint finds and reports pitfalls. Each edit changes one line
(incremental sync, as editors send it), waits for the diagnostics of the new version, then
pauses briefly as a typist would (so each edit is linted at once; the server's debounce
gathers only changes that arrive while a lint runs). Target: the median and the p95 of a
1,000-line file within 100 ms on this machine.
Rows: the server's first diagnostics after didOpen (the lint of a cold document), edits of the
1,000-line file, and of a 200-line file for scale; ratio = p95 / target. Wall latency counts the
time the server waits for a CPU on a shared machine; "server CPU" is the CPU time the server's
threads spent per edit (from /proc), which is what the latency is on an idle core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
TRIO_LINT = str(Path(sys.executable).parent / "trio-lint")
TARGET_MS = 100.0


def pytrio_source(lines: int) -> str:
    """Real PyTRIO code, `lines` lines long: examples/ and the demo's buggy script in turns,
    whole files only (a cut file would be a syntax error), padded with assignments."""
    buggy = (ROOT / "demo" / "buggy_train.py").read_text()
    sources = []
    for path in sorted((ROOT / "examples").glob("*.py")):
        sources += [buggy, path.read_text()]
    out: list[str] = []
    index = 0
    while True:
        piece = sources[index % len(sources)].splitlines()
        if len(out) + len(piece) > lines:
            break
        out.extend(piece)
        index += 1
    out.extend(f"PADDING_{n} = {n}" for n in range(lines - len(out)))
    return "\n".join(out) + "\n"


class Client:
    def __init__(self) -> None:
        self.client = LanguageClient("lsp-bench", "1")
        self.arrived: dict[tuple[str, int | None], float] = {}
        self.counts: dict[str, int] = {}
        self.event = asyncio.Event()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.arrived[(params.uri, params.version)] = time.perf_counter()
            self.counts[params.uri] = len(params.diagnostics)
            self.event.set()

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def logged(params: types.LogMessageParams) -> None:
            pass

    async def start(self, root: Path) -> None:
        await self.client.start_io(TRIO_LINT, "server")
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="bench")],
            )
        )
        self.client.initialized(types.InitializedParams())

    async def wait(self, uri: str, version: int) -> float:
        while (uri, version) not in self.arrived:
            self.event.clear()
            await asyncio.wait_for(self.event.wait(), timeout=30)
        return self.arrived[(uri, version)]

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def measure(client: Client, directory: Path, name: str, lines: int, edits: int):
    text = pytrio_source(lines)
    uri = (directory / name).as_uri()
    started = time.perf_counter()
    client.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    opened = (await client.wait(uri, 1) - started) * 1000
    findings = client.counts[uri]
    latencies, cpu = [], []
    pid = client.client._server.pid  # type: ignore[union-attr]
    line_count = len(text.splitlines())
    for number in range(edits):
        version = number + 2
        row = (number * 37) % line_count  # edits all over the file
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(row, 0), types.Position(row, 0)),
            text="# edit\n" if number % 2 == 0 else "",
        )
        if number % 2 == 1:  # remove the line the previous edit inserted
            previous = ((number - 1) * 37) % line_count
            change = types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(previous, 0), types.Position(previous + 1, 0)),
                text="",
            )
        await asyncio.sleep(0.15)  # a pause between keystrokes: each edit is linted on its own
        cpu_before = cpu_ms(pid)
        sent = time.perf_counter()
        client.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change],
            )
        )
        latencies.append((await client.wait(uri, version) - sent) * 1000)
        cpu.append(cpu_ms(pid) - cpu_before)
    return opened, findings, latencies, cpu


def cpu_ms(pid: int) -> float:
    """CPU time of every thread of the process (ns-precise, from /proc/<pid>/task/*/schedstat)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total / 1e6


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def main_async(edits: int, lines: int) -> None:
    with tempfile.TemporaryDirectory(prefix="lsp-bench-") as tmp:
        directory = Path(tmp)
        client = Client()
        await client.start(directory)
        rows = []
        try:
            for name, size in ((f"big_{lines}.py", lines), ("small_200.py", 200)):
                opened, findings, latencies, cpu = await measure(
                    client, directory, name, size, edits
                )
                first = "first didOpen (imports the rules)" if not rows else "didOpen"
                rows.append((f"{first}, {size} lines (wall)", findings, [opened]))
                rows.append((f"didChange, {size} lines (wall)", findings, latencies))
                rows.append((f"didChange, {size} lines (server CPU)", findings, cpu))
        finally:
            await client.stop()
    header = ("case", "findings", "n", "median ms", "p95 ms", "p95 / 100 ms")
    table = [header]
    for case, findings, values in rows:
        table.append(
            (
                case,
                str(findings),
                str(len(values)),
                f"{statistics.median(values):.1f}",
                f"{p95(values):.1f}",
                f"{p95(values) / TARGET_MS:.2f}",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load average (1, 5, 15 min): {' '.join(load)} on {os.cpu_count()} CPUs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--lines", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main_async(args.edits, args.lines))


if __name__ == "__main__":
    main()
