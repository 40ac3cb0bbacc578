#!/usr/bin/env python3
"""A stand-in daemon for the clients' read-only tests: every document it opens is read-only here
(protocol/decisions/roles.md), as a daemon whose role in the document's project is `read` says.

It speaks LSP framing on stdin/stdout, or one JSON object per line when the first byte it reads is
`{` (as `quire` does), and answers what the clients ask: `initialize`,
`document/open` (`readOnly: true`, the text as the editor sent it, nothing to change), every
`document/edit` refused with -32019 (as a notification: one `document/editRefused` per document and
epoch), a plain `document/resync` (the text it holds, a new epoch), and `null` or an empty result
for the rest. A resync carrying other text is refused like an edit.

Environment:
  QUIRE_FAKE_LOG      every message received is appended here, one JSON object per line
  QUIRE_FAKE_CONTROL  lines appended to this file (JSON messages) are sent to the editor as they
                      come, so a test can send `document/readOnly`; a line {"fake": "writable",
                      "uri": URI} is not sent but makes the stand-in take that document's edits from
                      then on (as a daemon whose role became `write`)
  QUIRE_FAKE_PROJECT  the project's name in the messages (default "notes")
"""
import json
import os
import sys
import threading
import time

PROJECT = os.environ.get("QUIRE_FAKE_PROJECT", "notes")
REASON = f"you can read {PROJECT} but not change it (role read)"
out_lock = threading.Lock()
line_mode = False
documents = {}   # uri -> {"text", "epoch", "refused_epochs"}
writable = set()   # documents whose edits are taken (told so on the control file)


def send(message):
    body = json.dumps(message).encode()
    with out_lock:
        sys.stdout.buffer.write(body + b"\n" if line_mode else b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()


def log(message):
    path = os.environ.get("QUIRE_FAKE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(message) + "\n")


def read_message(stream):
    global line_mode
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if length is None and line.lstrip().startswith(b"{"):
            line_mode = True
            return json.loads(line)
        line = line.strip()
        if not line:
            if length is not None:
                break
            continue
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value.strip())
    return json.loads(stream.read(length))


def read_only_error(uri):
    return {"code": -32019, "message": f"{json.dumps(uri)} is read-only here: {REASON}; nothing changed",
            "data": {"uri": uri, "project": PROJECT, "key": "0123456789abcdef", "role": "read", "reason": REASON}}


def answer(method, params):
    """(result, error) for a request."""
    if method == "initialize":
        offered = params.get("capabilities", {}).get("general", {}).get("positionEncodings", ["utf-16"])
        user = params.get("user", {}).get("name") or "reader"
        return {"protocolVersion": 1, "serverInfo": {"name": "readonly-fake", "version": "1"}, "sessionId": 1,
                "replica": "1", "user": {"name": user},
                "capabilities": {"positionEncoding": offered[0], "changeKinds": ["range", "lines", "full"],
                                 "textHash": "sha256", "cursors": True, "batches": True, "undo": True, "files": True}}, None
    if method == "document/open":
        uri = params.get("uri") or os.path.basename(params.get("file", "buffer"))
        document = documents.setdefault(uri, {"text": params.get("text", ""), "epoch": 0, "refused_epochs": set()})
        document["epoch"] += 1
        return {"uri": uri, "epoch": document["epoch"], "created": False, "changes": [], "view": "fake-view",
                "readOnly": True, "readOnlyReason": REASON}, None
    if method == "document/edit":
        if params.get("uri") in writable:
            return {"editorRevision": 1}, None
        return None, read_only_error(params.get("uri", ""))
    if method == "document/resync":
        uri = params.get("uri", "")
        document = documents.get(uri)
        if document is None:
            return None, {"code": -32010, "message": "Unknown document", "data": {"uri": uri}}
        if "text" in params and params["text"] != document["text"]:
            return None, read_only_error(uri)
        document["epoch"] += 1
        return {"uri": uri, "text": document["text"], "epoch": document["epoch"]}, None
    if method in ("document/undo", "document/redo", "document/merge"):
        return None, read_only_error(params.get("uri", ""))
    if method == "quire/status":
        return {"summary": {"editors": 1, "documents": len(documents), "links": 0, "linksUp": 0, "notYetSent": 0,
                            "removedKept": 0, "people": []}}, None
    if method == "quire/who":
        return {"people": []}, None
    if method == "document/list":
        return [{"uri": uri, "lines": 1, "characters": len(d["text"]), "editors": 1} for uri, d in documents.items()], None
    return None, None


def notified(method, params):
    if method == "exit":
        sys.exit(0)
    if method == "document/edit":
        uri = params.get("uri", "")
        if uri in writable:
            return
        document = documents.get(uri)
        epoch = params.get("epoch", 0)
        if document is not None and epoch not in document["refused_epochs"]:
            document["refused_epochs"].add(epoch)
            send({"jsonrpc": "2.0", "method": "document/editRefused",
                  "params": {"uri": uri, "epoch": epoch, "revision": params.get("revision", 0), "error": read_only_error(uri)}})


def control():
    path = os.environ.get("QUIRE_FAKE_CONTROL")
    if not path:
        return
    done = 0
    while True:
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines[done:]:
            if not line.strip():
                continue
            message = json.loads(line)
            if message.get("fake") == "writable":
                writable.add(message.get("uri"))
            else:
                send(message)
        done = len(lines)
        time.sleep(0.02)


def main():
    threading.Thread(target=control, daemon=True).start()
    stream = sys.stdin.buffer
    while True:
        message = read_message(stream)
        if message is None:
            return
        log(message)
        method, params = message.get("method"), message.get("params") or {}
        if "id" in message:
            result, error = answer(method, params)
            reply = {"jsonrpc": "2.0", "id": message["id"]}
            if error is not None:
                reply["error"] = error
            else:
                reply["result"] = result
            send(reply)
        else:
            notified(method, params)


if __name__ == "__main__":
    main()
