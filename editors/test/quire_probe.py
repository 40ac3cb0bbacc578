#!/usr/bin/env python3
"""Asks a running quire daemon, as one more editor through `quire attach`, what it holds.

Usage: quire_probe.py QUIRE SOCKET list            -> the document names, one per line
       quire_probe.py QUIRE SOCKET text URI        -> the document's text (joining it; it must exist)
       quire_probe.py QUIRE SOCKET links           -> how many peer links are up (quire/status summary)
       quire_probe.py QUIRE SOCKET who             -> "name path-or-uri line" per place of each person (quire/who)
       quire_probe.py QUIRE SOCKET invite ROLE     -> a join line inviting ROLE into the daemon's first project
       quire_probe.py QUIRE SOCKET role NAME ROLE  -> gives member NAME (or fingerprint) role ROLE in the daemon's first project
       quire_probe.py QUIRE SOCKET fingerprint     -> the daemon's identity key fingerprint (peer/status)
Messages go one JSON object per line (line mode), so no framing is needed.
"""
import json
import subprocess
import sys


def ask(quire, socket, requests):
    """Sends initialize and then `requests` (method, params); returns the results in order."""
    messages = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"user": {"name": "probe"}, "capabilities": {"general": {"positionEncodings": ["utf-32"]}}}}]
    for n, (method, params) in enumerate(requests, start=1):
        messages.append({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run([quire, "attach", socket], input=lines.encode(), capture_output=True, timeout=20)
    replies = {}
    for line in done.stdout.decode().splitlines():
        message = json.loads(line)
        if "id" in message and "method" not in message:
            replies[message["id"]] = message
    results = []
    for n in range(1, len(requests) + 1):
        reply = replies.get(n, {"error": {"message": "no reply"}})
        if "error" in reply:
            raise SystemExit(f"{requests[n - 1][0]} failed: {reply['error']['message']}")
        results.append(reply["result"])
    return results


def main():
    quire, socket, command = sys.argv[1:4]
    if command == "list":
        for document in ask(quire, socket, [("document/list", {})])[0]:
            print(document["uri"])
    elif command == "text":
        uri = sys.argv[4]
        names = [d["uri"] for d in ask(quire, socket, [("document/list", {})])[0]]
        if uri not in names:
            raise SystemExit(f"{uri} is not held by the daemon at {socket}")
        sys.stdout.write(ask(quire, socket, [("document/open", {"uri": uri}), ("document/text", {"uri": uri})])[1]["text"])
    elif command == "links":
        print(ask(quire, socket, [("quire/status", {})])[0]["summary"]["linksUp"])
    elif command == "who":
        for person in ask(quire, socket, [("quire/who", {})])[0]["people"]:
            for place in person["at"]:
                print(person["name"], place.get("path") or place["uri"], place["line"] + 1)
    elif command == "fingerprint":
        print(ask(quire, socket, [("peer/status", {})])[0]["fingerprint"])
    elif command in ("invite", "role"):
        projects = ask(quire, socket, [("project/list", {})])[0]["projects"]
        if not projects:
            raise SystemExit(f"the daemon at {socket} shares no project")
        key = projects[0]["key"]
        if command == "invite":
            print(ask(quire, socket, [("project/invite", {"key": key, "role": sys.argv[4]})])[0]["line"])
        else:
            print(ask(quire, socket, [("project/role", {"key": key, "member": sys.argv[4], "role": sys.argv[5]})])[0])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
