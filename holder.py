import socket, json, time, sys
s = socket.socket(socket.AF_UNIX); s.connect("/tmp/h18d-vim/s.sock")
def send(m):
    b = json.dumps(m).encode(); s.sendall(b"Content-Length: %d\r\n\r\n" % len(b) + b)
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"user":{"name":"emacs"}}})
send({"jsonrpc":"2.0","method":"initialized","params":{}})
send({"jsonrpc":"2.0","id":2,"method":"document/open","params":{"file":"/tmp/h18d-vim/proj/src/c.py","text":"c = 3\n"}})
time.sleep(6)
