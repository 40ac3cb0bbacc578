;;; quire-test.el --- Headless tests of quire.el against a real daemon  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by editors/emacs/test/run.sh: QUIRE_BINARY and QUIRE_TEST_SOCKET name the daemon.
;; A buffer is shared with quire.el while a second editor, a plain jsonrpc connection
;; through `quire attach', edits the same document.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'quire)

;; Every connection a test makes gets a name of its own.  jsonrpc (Emacs 28) keeps a
;; connection's unread bytes in a buffer named after it, " *NAME output*": two live
;; connections of one name share that buffer, and when both are sent a message at once, one
;; filter deletes the other's bytes.  Two editors named "editor" on one document lost a reply
;; that way (a `document/text' "Timed out", though the daemon had answered in a millisecond).
(defvar quire-test--connections 0 "How many connections the tests have named.")

(defun quire-test--unique-name (name)
  "NAME with a number no other connection of these tests has."
  (format "%s-%d" name (cl-incf quire-test--connections)))

(defvar quire-test--other nil "The second editor's connection.")

(defconst quire-test--directory (file-name-directory (or load-file-name buffer-file-name))
  "editors/emacs/test, for the other clients' sources.")

(defun quire-test--wait (predicate &optional timeout)
  "Process input until PREDICATE holds or TIMEOUT seconds pass; return its value."
  (let ((deadline (+ (float-time) (or timeout 5))) (value nil))
    ;; PREDICATE's last value is returned, not a value of a further call: a predicate that asks
    ;; the daemon processes input while it waits, so two calls can see two moments.
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.01))
    value))

(defun quire-test--other-request (method params)
  "Send METHOD with PARAMS as the second editor and return the result."
  (jsonrpc-request quire-test--other method params))

(defun quire-test--daemon-text ()
  "The document's text as the daemon sends it to the second editor."
  (plist-get (quire-test--other-request :document/text '(:uri "shared.el.txt")) :text))

(ert-deftest quire-test-share-edit-and-merge ()
  (let* ((binary (getenv "QUIRE_BINARY")) (socket (getenv "QUIRE_TEST_SOCKET"))
         (quire-command (list binary "attach" socket)))
    (setq quire-test--other
          (jsonrpc-process-connection
           :name (quire-test--unique-name "other")
           :process (make-process :name "other" :command (list binary "attach" socket) :connection-type 'pipe
                                  :coding 'utf-8-emacs-unix :noquery t)
           :notification-dispatcher #'ignore :request-dispatcher #'ignore))
    (quire-test--other-request :initialize '(:user (:name "otto") :capabilities (:general (:positionEncodings ["utf-32"]))))
    (with-temp-buffer
      (insert "hello\nworld\n")
      (quire-share "shared.el.txt")
      (should quire-mode)
      (should (string-match-p "; documents kept in .*/quire" (quire-status)))
      (let ((changes (plist-get (quire-test--other-request :document/open '(:uri "shared.el.txt" :text "")) :changes)))
        (should (equal (plist-get (aref changes 0) :text) "hello\nworld\n")))
      ;; The daemon says who is where; no name was configured, so the daemon named this person.
      (should (string-match-p "; with otto (shared.el.txt);" (quire-status)))
      (should (and (stringp quire--user-name) (not (string-empty-p quire--user-name))))
;; The other editor's cursor shows here, with its name.
      (jsonrpc-notify quire-test--other :cursor/update
                      '(:uri "shared.el.txt" :revision 0
                        :selections [(:start (:line 1 :character 2) :end (:line 1 :character 2))]))
      (should (quire-test--wait
               (lambda () (seq-find (lambda (o) (string-match-p "otto" (or (overlay-get o 'after-string) "")))
                                    (overlays-in (point-min) (point-max))))))
      (should (equal (overlay-start (seq-find (lambda (o) (overlay-get o 'after-string)) (overlays-in (point-min) (point-max))))
                     (+ (point-min) 6 2)))
      ;; A selection is highlighted as a region.
      (jsonrpc-notify quire-test--other :cursor/update
                      '(:uri "shared.el.txt" :revision 0
                        :selections [(:start (:line 0 :character 2) :end (:line 1 :character 3))]))
      (should (quire-test--wait
               (lambda () (seq-find (lambda (o) (and (eq (overlay-get o 'face) 'quire-selection-face)
                                                     (= (overlay-start o) 3) (= (overlay-end o) 10)))
                                    (overlays-in (point-min) (point-max))))))
      ;; Typing goes to the daemon.
      (goto-char (point-min))
      (end-of-line)
      (insert " there")
      (should (quire-test--wait (lambda () (equal (quire-test--daemon-text) "hello there\nworld\n"))))
      ;; A remote edit lands without being echoed.
      (quire-test--other-request :document/edit
                                 '(:uri "shared.el.txt" :revision 1
                                   :changes [(:range (:start (:line 1 :character 5) :end (:line 1 :character 5)) :text "!")]))
      (should (quire-test--wait (lambda () (equal (buffer-string) "hello there\nworld!\n"))))
      (accept-process-output nil 0.1)
      (should (equal (quire-test--daemon-text) "hello there\nworld!\n"))
      ;; Point follows text the other inserts before it, on its line and above it, and typing
      ;; then lands where point is.
      (goto-char (point-min))
      (forward-char 6)                  ; on the "t" of "there"
      (quire-test--other-request :document/edit
                                 '(:uri "shared.el.txt" :revision 1
                                   :changes [(:range (:start (:line 0 :character 0) :end (:line 0 :character 0)) :text "oh ")]))
      (should (quire-test--wait (lambda () (equal (buffer-string) "oh hello there\nworld!\n"))))
      (should (equal (char-after) ?t))
      (should (equal (point) 10))
      (insert "out ")
      (should (quire-test--wait (lambda () (equal (quire-test--daemon-text) "oh hello out there\nworld!\n"))))
      (delete-region 1 4)
      (delete-region 7 11)
      (should (quire-test--wait (lambda () (equal (quire-test--daemon-text) "hello there\nworld!\n"))))
      ;; Enter in the middle of a line here while the other editor types at its end.
      (jsonrpc-notify quire-test--other :document/edit
                      '(:uri "shared.el.txt" :revision 1
                        ;; Its own "oh " is still in its view: it has applied none of ours since.
                        :changes [(:range (:start (:line 0 :character 14) :end (:line 0 :character 14)) :text "?")]))
      (goto-char (point-min))
      (forward-char 5)
      (insert "\n")
      (should (quire-test--wait (lambda () (equal (buffer-string) "hello\n there?\nworld!\n"))))
      (should (equal (quire-test--daemon-text) (buffer-string)))
      ;; Non-ASCII: positions in code points.
      (goto-char (point-max))
      (insert "wörld😀é\n")
      (should (quire-test--wait (lambda () (equal (quire-test--daemon-text) (buffer-string)))))
      ;; The escape hatch.
      (let ((inhibit-modification-hooks t)) (goto-char (point-min)) (insert "corrupt"))
      (quire-resync)
      (should (equal (buffer-string) "hello\n there?\nworld!\nwörld😀é\n"))
      (quire-stop))))

(defun quire-test--daemon-text-at (binary socket uri)
  "URI's text in the daemon at SOCKET, asked through a fresh connection; nil if absent."
  (let* ((connection (jsonrpc-process-connection
                      :name (quire-test--unique-name "probe")
                      :process (make-process :name "probe" :command (list binary "attach" socket)
                                             :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t)
                      :notification-dispatcher #'ignore :request-dispatcher #'ignore)))
    (unwind-protect
        (progn
          (jsonrpc-request connection :initialize (make-hash-table))
          (when (seq-find (lambda (d) (equal (plist-get d :uri) uri))
                          (jsonrpc-request connection :document/list (make-hash-table)))
            (jsonrpc-request connection :document/open (list :uri uri :text ""))
            (prog1 (plist-get (jsonrpc-request connection :document/text (list :uri uri)) :text)
              ;; Closed, so that the probe leaves no view behind: the daemon keeps at most 8
              ;; views of a document whose editors went away, and probing while the client
              ;; reconnects must not push out the client's.
              (jsonrpc-request connection :document/close (list :uri uri)))))
      (ignore-errors (jsonrpc-shutdown connection)))))

(defun quire-test--start-daemon (socket &optional log)
  "Start a daemon on SOCKET, its documents next to it; return its process once it listens.
With LOG, a buffer, the daemon logs there at level info."
  (let ((process (make-process :name "daemon" :connection-type 'pipe :noquery t
                               :command (append (list (getenv "QUIRE_BINARY") "--no-stdio" "--socket" socket
                                                      "--data-dir" (concat socket ".data"))
                                                (and log '("--log-level" "info")))
                               :stderr log)))
    (quire-test--wait (lambda () (file-exists-p socket)))
    process))

(defun quire-test--await-daemon-gone (daemon socket)
  "Wait until the killed DAEMON is gone and the client noticed; remove its SOCKET file."
  (quire-test--wait (lambda () (not (process-live-p daemon))))
  (quire-test--wait (lambda () (null quire--connection)))
  (ignore-errors (delete-file socket)))

(defmacro quire-test--with-own-daemon (suffix &rest body)
  "Run BODY in a temporary buffer, the client using a daemon of its own.
The daemon listens on the test socket plus SUFFIX.  BODY sees `binary',
`socket' and `daemon' (which it sets when it starts another); afterwards the
client stops and the daemon is killed, even when BODY fails."
  (declare (indent 1))
  `(let* ((binary (getenv "QUIRE_BINARY"))
          (socket (concat (getenv "QUIRE_TEST_SOCKET") ,suffix))
          (daemon (quire-test--start-daemon socket))
          (quire-command (list binary "attach" socket)))
     (unwind-protect
         (with-temp-buffer ,@body)
       (quire-stop)
       (ignore-errors (kill-process daemon)))))

;; Peers need a secret; every daemon the test starts inherits it.
(setenv "QUIRE_SECRET" "quire-szsqpzxhnq26d4cn464yk4gs5ck3vieloicis6obw3auyxivowm5h2et")

(defun quire-test--probe (socket)
  "A second editor on the daemon at SOCKET, initialized."
  (let ((connection (jsonrpc-process-connection
                     :name (quire-test--unique-name "probe")
                     :process (make-process :name "probe" :command (list (getenv "QUIRE_BINARY") "attach" socket)
                                            :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t)
                     :notification-dispatcher #'ignore :request-dispatcher #'ignore)))
    (jsonrpc-request connection :initialize '(:user (:name "dee")))
    connection))

(defun quire-test--said (pattern)
  "Whether *Messages* has a line matching PATTERN."
  (with-current-buffer (messages-buffer) (save-excursion (goto-char (point-min)) (re-search-forward pattern nil t))))

(ert-deftest quire-test-peers-are-told-listen-survives-and-forks-merge ()
  "Peers joining and leaving shown, disconnecting, listening again after the
daemon restarts, and merging a copy of the same name created separately on
another daemon."
  (quire-test--with-own-daemon ".peers"
    (insert "shared by emacs\n")
    (quire-share "plan.el.txt")
    (should (quire-test--said "Quire: sharing \"plan.el.txt\""))
    (quire-listen 0)
    (let* ((port quire--listen-port)
           (far (concat socket ".far"))
           (far-daemon (quire-test--start-daemon far))
           (dee (quire-test--probe far)))
      (unwind-protect
          (progn
            ;; Made on the far daemon before the link: the same name, another document.
            (jsonrpc-request dee :document/open '(:uri "plan.el.txt" :text "dee's plan\n"))
            (jsonrpc-request dee :peer/connect (list :port port))
            (should (quire-test--wait (lambda () (quire-test--said "another document named \"plan.el.txt\"")) 10))
            ;; Worded by the client, with its own commands (the daemon sends document/forked).
            (should (quire-test--said "M-x quire-merge merges its text into yours"))
            (should (quire-test--wait (lambda () (eql quire--links-up 1))))
            (let ((fork (with-current-buffer (messages-buffer)
                          (save-excursion (goto-char (point-max))
                                          (re-search-backward "plan\\.el\\.txt#[0-9a-f]+")
                                          (match-string 0)))))
              ;; The copy is made when its name arrives; its text follows.
              (should (quire-test--wait
                       (lambda () (let ((probe (quire-test--probe socket)))
                                    (prog1 (seq-find (lambda (d) (and (equal (plist-get d :uri) fork) (> (plist-get d :characters) 0)))
                                                     (jsonrpc-request probe :document/list (make-hash-table)))
                                      (jsonrpc-shutdown probe))))
                       10))
              (quire-merge fork)
              (should (quire-test--wait (lambda () (equal (buffer-string) "shared by emacs\ndee's plan\n")))))
            (quire-disconnect)
            (should (quire-test--said "disconnected link"))
            (should (quire-test--wait (lambda () (quire-test--said " left (disconnected by an editor)"))))
            (should (quire-test--wait (lambda () (eql quire--links-up 0))))
            ;; The daemon restarts: asked to listen on the same port again.
            (signal-process daemon 'KILL)
            (quire-test--await-daemon-gone daemon socket)
            (setq daemon (quire-test--start-daemon socket))
            (should (quire-test--wait (lambda () (and quire--connection (jsonrpc-running-p quire--connection))) 10))
            (let ((probe (quire-test--probe socket)))
              (should (equal (plist-get (jsonrpc-request probe :peer/status (make-hash-table)) :listening) (vector port)))
              (jsonrpc-shutdown probe)))
        (ignore-errors (jsonrpc-shutdown dee))
        (ignore-errors (kill-process far-daemon))))))

;; Through a relay: the daemon and the far one both dial out.
(ert-deftest quire-test-connect-through-a-relay ()
  "`quire-connect-relay': this daemon dials a `quire relay' that another daemon
dials too (neither listens); the relay pairs them and the person is told who
joined."
  (quire-test--with-own-daemon ".relay"
    (insert "through the relay\n")
    (quire-share "relayed.el.txt")
    (let* ((relay-log (generate-new-buffer " *relay*"))
           (relay (make-process :name "relay" :connection-type 'pipe :noquery t :stderr relay-log
                                :command (list binary "relay" "--listen" "127.0.0.1:0")))
           (far-log (generate-new-buffer " *far*"))
           (port nil) (far nil))
      (unwind-protect
          (progn
            (should (quire-test--wait
                     (lambda () (setq port (with-current-buffer relay-log
                                             (save-excursion
                                               (goto-char (point-min))
                                               (and (re-search-forward "listening on 127\\.0\\.0\\.1:\\([0-9]+\\)" nil t)
                                                    (string-to-number (match-string 1)))))))
                     10))
            (quire-connect-relay "127.0.0.1" port)
            (should (quire-test--said (format "Quire: dialing the relay 127\\.0\\.0\\.1:%d to be paired" port)))
            (setq far (make-process :name "far" :connection-type 'pipe :noquery t :stderr far-log
                                    :command (list binary "--no-stdio" "--socket" (concat socket ".far")
                                                   "--data-dir" (concat socket ".far.data")
                                                   "--relay" (format "127.0.0.1:%d" port) "--user-name" "bea")))
            (should (quire-test--wait (lambda () (quire-test--said "Quire: bea joined")) 10))
            (should (quire-test--wait (lambda () (eql quire--links-up 1)))))
        ;; Nothing of this test outlives it: not the processes, nor the pipes of their stderr.
        (dolist (process (list far relay))
          (when process
            (ignore-errors (kill-process process))
            (quire-test--wait (lambda () (not (process-live-p process))))))
        (kill-buffer far-log)
        (kill-buffer relay-log)))))

(ert-deftest quire-test-reconnect-after-daemon-restart ()
  "`kill -9' of the daemon: what was typed at once and while it was away is
kept, and the reopen sends the view, epoch, revision and text, no base."
  (quire-test--with-own-daemon ".reconnect"
    (insert "kept\nacross restarts\n")
    (quire-share "kept.el.txt")
    (let ((opens nil) (request (symbol-function 'quire--request)))
      (cl-letf (((symbol-function 'quire--request)
                 (lambda (method params &rest more)
                   (when (eq method :document/open) (push params opens))
                   (apply request method params more))))
        (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "kept.el.txt")
                                                    "kept\nacross restarts\n"))))
        ;; Typed at once, before the client noticed: sent towards a daemon that is gone, never
        ;; acknowledged, so the reopen merges it.
        (signal-process daemon 'SIGKILL)
        (goto-char (point-max))
        (insert "typed at once\n")
        (quire-test--await-daemon-gone daemon socket)
        (goto-char (point-max))
        (insert "typed while away\n")
        ;; The daemon's end is handled quietly (with `quire attach' the client sees status 0).
        (should-not (quire-test--said "Server exited with status [01]"))
        (should-not (quire-test--said "refused an edit (Server died)"))
        (setq daemon (quire-test--start-daemon socket))
        (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "kept.el.txt")
                                                    "kept\nacross restarts\ntyped at once\ntyped while away\n"))
                                  10))
        ;; The reopen: what the buffer shows, its view, epoch and revision; no base.
        (should (= (length opens) 1))
        (should (equal (sort (cl-loop for (key _value) on (car opens) by #'cddr collect (symbol-name key)) #'string<)
                       '(":epoch" ":revision" ":text" ":uri" ":view")))
        (should (equal (plist-get (car opens) :text) "kept\nacross restarts\ntyped at once\ntyped while away\n"))))
    (goto-char (point-min))
    (insert ">")
    (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "kept.el.txt")
                                                ">kept\nacross restarts\ntyped at once\ntyped while away\n"))))))

(ert-deftest quire-test-refused-edit-resyncs-keeping-both-texts ()
  "An edit the daemon refuses (a client bug: a revision it never sent) is
said, and the buffer resynced with `text', `epoch' and `revision', no
base: what was typed (the refused edit, and the next one, refused too) and
what the other editor typed meanwhile all stay.  Edits are named."
  (quire-test--with-own-daemon ".refused"
    (let ((uri "refused.el.txt") (resyncs nil) (broken nil) (ids nil)
          (async (symbol-function 'jsonrpc-async-request))
          (request (symbol-function 'quire--request)))
      (insert "x <A1> y\nf(x) \"s\"\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri)))
        (unwind-protect
            (cl-letf (((symbol-function 'jsonrpc-async-request)
                       (lambda (connection method params &rest options)
                         (when (eq method :document/edit)
                           (push (plist-get params :editId) ids)
                           (unless broken
                             (setq broken t
                                   params (plist-put (copy-sequence params) :revision (+ 100 (plist-get params :revision))))))
                         (apply async connection method params options)))
                      ((symbol-function 'quire--request)
                       (lambda (method params &rest more)
                         (when (eq method :document/resync) (push params resyncs))
                         (apply request method params more))))
              (goto-char (point-max))
              ;; Two commands' insertions: each sent when its command ends.
              (insert "<K1> kept\n")
              (quire--flush-all)
              (should broken)
              (should (string-prefix-p quire--instance (car ids)))
              (insert "and this\n")
              (quire--flush-all)
              (should (= (length ids) 2))
              ;; The other editor types at the start before this one has read the refusal (a
              ;; notification: a synchronous request here would nest the resync's inside its wait).
              (jsonrpc-notify other :document/edit
                              (list :uri uri :revision (process-get (jsonrpc--process other) 'revision)
                                    :changes (vector (list :range '(:start (:line 0 :character 0) :end (:line 0 :character 0))
                                                           :text "partner "))))
              (should (quire-test--wait (lambda () (equal (plist-get quire--state :epoch) 1))))
              (should (quire-test--said "refused an edit"))
              (should (quire-test--agree other uri))
              (should (= (quire-test--count "<K1> kept\nand this\n" (quire--text)) 1))
              (should (= (quire-test--count "partner x <A1>" (quire--text)) 1))
              (should (= (length resyncs) 1))
              (let ((resync (car resyncs)))
                (should (equal (plist-get resync :epoch) 0))
                (should (integerp (plist-get resync :revision)))
                (should (stringp (plist-get resync :text)))
                (should-not (plist-member resync :base)))
              ;; Sharing goes on in the new epoch.
              (goto-char (point-max))
              (insert "<Z9>\n")
              (should (quire-test--agree other uri)))
          (jsonrpc-shutdown other))))))

;; Tokens as programmers type them: each must end once and whole.
(defun quire-test--count (token text)
  "How many times TOKEN occurs in TEXT."
  (let ((count 0) (start 0))
    (while (setq start (string-search token text start))
      (setq count (1+ count) start (+ start (length token))))
    count))

(ert-deftest quire-test-reopen-after-kill-resumes-the-view ()
  "`kill -9' while the buffer is shared with another editor.  Typed at the
crash and while the daemon is away (`<A1>' replaced by `<B1>'), while the
other editor, after the restart and before this buffer reopens, replaces
the same `<A1>' by `<C1>' and types.  The reopen carries the view of the
open, its epoch and the revision the buffer was at; the daemon resumes the
view, and the buffer and the daemon end equal with every token once and whole,
an edit the daemon applied before the crash but whose reply was lost too."
  (let ((log (generate-new-buffer " *quire-test-daemon-log*")))
    (quire-test--with-own-daemon ".view"
      (let ((uri "view.el.txt") (opens nil))
        (setq quire--stopping nil)
        (insert "x <A1> y f(x) \"s\"\n<A2> end\n")
        (quire-share uri)
        (let ((view (plist-get quire--state :view))
              (other (quire-test--editor socket uri)))
          (should (stringp view))
          ;; Kept, like the rest of the state, when a major mode resets local variables.
          (text-mode)
          (should (equal (plist-get quire--state :view) view))
          (should (quire-test--agree other uri))
          ;; Acknowledged edits both ways before the crash: the buffer is past revision 0.
          (quire-test--remote-insert other uri "end" "<P1> ")
          (should (quire-test--wait (lambda () (string-match-p "<P1> end" (quire--text)))))
          (goto-char (point-max))
          (insert "<E1> g(y)\n")
          (should (quire-test--agree other uri))
          ;; An edit the daemon applied whose reply is lost in the crash.
          (cl-letf* ((async (symbol-function 'jsonrpc-async-request))
                     ((symbol-function 'jsonrpc-async-request)
                      (lambda (connection method params &rest options)
                        (apply async connection method params (plist-put (copy-sequence options) :success-fn #'ignore)))))
            (goto-char (point-min))
            (search-forward "y ")
            (insert "<F1> "))
          (should (quire-test--agree other uri))
          (let ((epoch (plist-get quire--state :epoch)) (revision (plist-get quire--state :daemon)))
            (should (equal revision 1))
            ;; No reconnection of its own: the test reopens once the other editor typed.
            (setq quire--reconnect-delay 60)
            (signal-process daemon 'KILL)
            ;; Typed at once, before the client noticed: in flight at the crash.
            (goto-char (point-min))
            (insert "<T1> ")
            (quire-test--await-daemon-gone daemon socket)
            (ignore-errors (delete-process (jsonrpc--process other)))
            (when quire--reconnect-timer (cancel-timer quire--reconnect-timer) (setq quire--reconnect-timer nil))
            ;; Typed while the daemon is away.
            (goto-char (point-min))
            (search-forward "<A1>")
            (replace-match "<B1>" t t)
            (goto-char (point-max))
            (insert "\"away\" h(z)\n")
            (setq daemon (quire-test--start-daemon socket log))
            (let ((other (quire-test--editor socket uri)))
              (unwind-protect
                  (progn
                    ;; The other editor meanwhile replaces the same token and types.
                    (let* ((text (quire-test--text-of other uri))
                           (at (string-search "<A1>" text)))
                      (should at)
                      (jsonrpc-request other :document/edit
                                       (list :uri uri :revision 0
                                             :changes (vector (list :range (list :start (list :line 0 :character at)
                                                                                 :end (list :line 0 :character (+ at 4)))
                                                                    :text "<C1>"))))
                      (process-put (jsonrpc--process other) 'sent 1))
                    (quire-test--remote-insert other uri "f(x)" "<R3> ")
                    (setq quire--reconnect-delay 0.25)
                    (cl-letf* ((request (symbol-function 'quire--request))
                               ((symbol-function 'quire--request)
                                (lambda (method params &rest more)
                                  (when (eq method :document/open) (push params opens))
                                  (apply request method params more))))
                      (quire--reconnect))
                    (should (and quire--connection (jsonrpc-running-p quire--connection)))
                    ;; The reopen named the view, the epoch and the revision the buffer was at,
                    ;; and no base and no edits in flight: the daemon knows what it read.
                    (should (= (length opens) 1))
                    (let ((open (car opens)))
                      (should (equal (plist-get open :view) view))
                      (should (equal (plist-get open :epoch) epoch))
                      (should (equal (plist-get open :revision) revision))
                      (should-not (plist-member open :base))
                      (should-not (plist-member open :pending))
                      (should (string-match-p "<T1> x <B1> y" (plist-get open :text))))
                    (should (equal (plist-get quire--state :view) view))
                    (should (quire-test--wait (lambda () (with-current-buffer log
                                                           (string-match-p "its view resumed" (buffer-string))))))
                    (should (quire-test--agree other uri))
                    (let ((text (quire--text)))
                      (dolist (token '("<T1>" "<F1>" "<B1>" "<C1>" "<R3>" "<P1>" "<E1>" "<A2>" "f(x)" "g(y)" "h(z)"
                                       "\"s\"" "\"away\""))
                        (should (equal (list token (quire-test--count token text)) (list token 1))))
                      (should (equal (quire-test--count "<A1>" text) 0)))
                    ;; Sharing goes on.
                    (goto-char (point-max))
                    (insert "<Z9>\n")
                    (should (quire-test--agree other uri)))
                (jsonrpc-shutdown other))))))
      (kill-buffer log))))

(ert-deftest quire-test-opening-over-other-text-asks ()
  "Sharing a buffer under a name that holds other text: the daemon changes
nothing (-32017) and the person is asked; until answered the buffer is not
shared.  Taking the shared text, merging both and keeping the buffer's text
apart (shared as NAME~USER, and said so) each end as promised; quitting the
question leaves the buffer unshared."
  (quire-test--with-own-daemon ".differs"
    (let ((theirs "their plan <T1> f(x)\n") (mine "my own plan <M1> \"s\"\n")
          (quire-user-name "emma")
          (probe (quire-test--probe socket)))
      (unwind-protect
          (cl-flet ((share-answering
                     (uri key)
                     (jsonrpc-request probe :document/open (list :uri uri :text theirs))
                     (let ((asked nil))
                       (with-current-buffer (get-buffer-create (concat "mine " uri))
                         (insert mine)
                         (cl-letf (((symbol-function 'read-multiple-choice)
                                    (lambda (prompt choices &rest _)
                                      ;; Not shared while asking, and the shared text is untouched.
                                      (should-not quire--state)
                                      (should-not quire-mode)
                                      (should (equal (quire-test--text-of probe uri) theirs))
                                      (should (string-match-p (regexp-quote uri) prompt))
                                      (setq asked t)
                                      (if (eq key 'quit) (signal 'quit nil) (assq key choices)))))
                           (if (eq key 'quit)
                               (should (eq (condition-case nil (progn (quire-share uri) 'shared) (quit 'quit)) 'quit))
                             (quire-share uri)))
                         (should asked)
                         (current-buffer)))))
            ;; Take the shared text.
            (with-current-buffer (share-answering "take.el.txt" ?t)
              (should quire-mode)
              (should (equal (quire--text) theirs))
              (should (equal (quire-test--text-of probe "take.el.txt") theirs))
              (insert "<K1>")
              (should (quire-test--wait (lambda () (equal (quire-test--text-of probe "take.el.txt") (quire--text))))))
            ;; Merge both: this text after the shared text.
            (with-current-buffer (share-answering "merge.el.txt" ?m)
              (should quire-mode)
              (should (equal (quire--text) (concat theirs mine)))
              (should (quire-test--wait (lambda () (equal (quire-test--text-of probe "merge.el.txt") (concat theirs mine))))))
            ;; Keep mine apart: shared under another name, and said so.
            (with-current-buffer (share-answering "apart.el.txt" ?k)
              (should quire-mode)
              (should (equal (plist-get quire--state :uri) "apart.el.txt~emma"))
              (should (equal (quire--text) mine))
              (should (quire-test--said "\"apart.el.txt\" is shared with other text: your text is shared apart as \"apart.el.txt~emma\""))
              (should (equal (quire-test--text-of probe "apart.el.txt") theirs))
              (should (equal (quire-test--daemon-text-at binary socket "apart.el.txt~emma") mine)))
            ;; No answer: not shared, nothing changed.
            (with-current-buffer (share-answering "quit.el.txt" 'quit)
              (should-not quire-mode)
              (should-not quire--state)
              (should (equal (quire--text) mine))
              (should (equal (quire-test--text-of probe "quit.el.txt") theirs))))
        (ignore-errors (jsonrpc-shutdown probe))
        (dolist (uri '("take.el.txt" "merge.el.txt" "apart.el.txt" "quit.el.txt"))
          (when (get-buffer (concat "mine " uri))
            (with-current-buffer (concat "mine " uri) (quire-mode -1))
            (kill-buffer (concat "mine " uri))))))))

(ert-deftest quire-test-kept-apart-from-a-file-is-bound-to-no-file ()
  "Keeping a file's text apart (-32017, then \"keep mine apart\") shares it as
NAME~USER bound to no file, as Vim and Neovim do: the file stays the
document of its name's, so the daemon cannot save the copy, `save-buffer'
writes the file and sends no `document/saved', and `revert-buffer' shows
the shared text (what another person typed into the copy stays)."
  (quire-test--with-own-daemon ".apart-file"
    (let* ((quire-user-name "emma")
           (path (make-temp-file "quire-apart-" nil ".txt" "my filed plan <F1>\n"))
           (uri (file-name-nondirectory path))   ; the daemon's name: no project root above
           (apart (concat uri "~emma"))
           (theirs "their filed plan <T2> f(x)\n")
           (probe (quire-test--editor socket uri))
           (saved nil))
      (unwind-protect
          (progn
            (quire-test--remote-insert probe uri "" theirs)
            (should (equal (quire-test--text-of probe uri) theirs))
            (with-current-buffer (find-file-noselect path)
              (cl-letf (((symbol-function 'read-multiple-choice) (lambda (_prompt choices &rest _) (assq ?k choices))))
                (quire-share uri))
              (should quire-mode)
              (should (equal (plist-get quire--state :uri) apart))
              (should-not (plist-get quire--state :file))
              (let ((other (quire-test--editor socket apart))
                    (unbound (lambda ()
                               (condition-case failure
                                   (progn (jsonrpc-request probe :document/save (list :uri apart)) nil)
                                 (jsonrpc-error (eql (alist-get 'jsonrpc-error-code (cddr failure)) -32602))))))
                (unwind-protect
                    (cl-letf* ((notify (symbol-function 'jsonrpc-notify))
                               ((symbol-function 'jsonrpc-notify)
                                (lambda (connection method params)
                                  (when (eq method :document/saved) (push params saved))
                                  (funcall notify connection method params))))
                      (jsonrpc-request probe :document/open (list :uri apart :text ""))
                      (should (funcall unbound))
                      (goto-char (point-max))
                      (insert "apart filed <K4>\n")
                      (should (quire-test--agree other apart))
                      (save-buffer)
                      (should (equal (quire-test--file-text path) "my filed plan <F1>\napart filed <K4>\n"))
                      (should-not saved)
                      (should (funcall unbound))
                      ;; Another person types into the copy; a revert shows the shared text.
                      (quire-test--remote-insert other apart "apart" "<O5> ")
                      (should (quire-test--wait (lambda () (string-match-p "<O5> apart" (quire--text)))))
                      (revert-buffer t t)
                      (should quire-mode)
                      (should (quire-test--agree other apart))
                      (should (equal (quire--text) "my filed plan <F1>\n<O5> apart filed <K4>\n"))
                      (should (equal (quire-test--text-of probe uri) theirs)))
                  (jsonrpc-shutdown other)))
              (quire-stop)
              (set-buffer-modified-p nil)
              (kill-buffer)))
        (ignore-errors (jsonrpc-shutdown probe))
        (delete-file path)))))

(ert-deftest quire-test-reconnect-unwound-half-way-starts-over ()
  "A reconnection that is unwound half way leaves no half-made connection and starts over.
That happens when its timer runs while another package waits for a
synchronous jsonrpc reply: when that reply comes first, its `throw' unwinds
through the reconnection."
  (quire-test--with-own-daemon ".unwound"
    (setq quire--stopping nil)
    (insert "before\n")
    (quire-share "unwound.el.txt")
    (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "unwound.el.txt")
                                                "before\n"))))
    (setq quire--reconnect-delay 60)   ; no reconnection of its own while this test drives one
    (signal-process daemon 'SIGKILL)
    (quire-test--await-daemon-gone daemon socket)
    (goto-char (point-max))
    (insert "while away\n")
    (setq daemon (quire-test--start-daemon socket))
    (when quire--reconnect-timer (cancel-timer quire--reconnect-timer) (setq quire--reconnect-timer nil))
    (setq quire--reconnect-delay 0.25)
    ;; Connected, then unwound while reopening the buffer, as an outer request's reply would.
    (catch 'outer-request-answered
      (cl-letf (((symbol-function 'quire--request) (lambda (&rest _) (throw 'outer-request-answered nil))))
        (quire--reconnect)))
    (should (null quire--connection))
    (should quire--reconnect-timer)
    (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "unwound.el.txt")
                                                "before\nwhile away\n"))
                              10))))

(ert-deftest quire-test-refused-resync-keeps-the-text-and-tries-again ()
  "A resync the daemon refuses too (-32018: the document has no room for the text)
changes nothing here: the buffer keeps its text, the person is told why, and the
next refused edit resyncs again."
  (let* ((binary (getenv "QUIRE_BINARY")) (socket (getenv "QUIRE_TEST_SOCKET"))
         (quire-command (list binary "attach" socket))
         (why "\"too-large.el.txt\" cannot take 5 more characters: it holds 4, counting removed ones until they are dropped, and a document may hold at most 8 (peers refuse more); nothing changed"))
    (with-temp-buffer
      (insert "one\n")
      (quire-share "too-large.el.txt")
      (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "too-large.el.txt") "one\n"))))
      (let ((epoch (plist-get quire--state :epoch))
            (real (symbol-function 'quire--request))
            (async (symbol-function 'jsonrpc-async-request))
            (broken nil))
        ;; The daemon refuses the resync as it does a document with no room left.
        (cl-letf (((symbol-function 'quire--request)
                   (lambda (method params &rest more)
                     (if (eq method :document/resync)
                         (signal 'jsonrpc-error (list why (cons 'jsonrpc-error-code -32018) (cons 'jsonrpc-error-message why)))
                       (apply real method params more))))
                  ;; A client bug makes the next edit refused (a revision never sent), which starts a resync.
                  ((symbol-function 'jsonrpc-async-request)
                   (lambda (connection method params &rest options)
                     (when (and (eq method :document/edit) (not broken))
                       (setq broken t
                             params (plist-put (copy-sequence params) :revision (+ 100 (plist-get params :revision)))))
                     (apply async connection method params options))))
          (goto-char (point-max))
          (insert "kept\n")
          (should (quire-test--wait (lambda () (string-match-p (regexp-quote (concat "is not shared: " why))
                                                               (with-current-buffer "*Messages*" (buffer-string)))))))
        (should (equal (buffer-string) "one\nkept\n"))
        (should (equal (plist-get quire--state :epoch) epoch))
        (should (null (plist-get quire--state :resyncing)))
        (should (equal (quire-test--daemon-text-at binary socket "too-large.el.txt") "one\n")))
      ;; The next edit is refused (its epoch waits for a resync), and this resync keeps the text.
      (insert "more\n")
      (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "too-large.el.txt") "one\nkept\nmore\n"))))
      (should (equal (buffer-string) "one\nkept\nmore\n"))
      (quire-stop))))

(ert-deftest quire-test-status-words-what-the-daemon-counted ()
  "The status line words the daemon's summary (links up, in sync or not, removed
characters kept for peers, who is where), shows the daemon's key and, per link,
whether it is encrypted and whose key it reached."
  (should (equal (quire--status-summary
                  '(:sessions 1 :documents [(:uri "a")] :storage :null
                    :summary (:editors 3 :documents 2 :links 2 :linksUp 1 :notYetSent 0 :removedKept 7
                              :people [(:name "otto" :documents ["a" "b"]) (:name "pia" :documents ["a"])])
                    :peers (:fingerprint "aaaa-bbbb"
                            :links [(:link 1 :user "bob" :address "tcp to h:1" :state "established" :encrypted t :fingerprint "3f1c-0a9e")
                                    (:link 2 :user "" :address "tcp from 10.0.0.9:4" :state "handshaking" :encrypted :json-false :fingerprint :null)]
                            :documents [(:uri "a" :tombstones 3) (:uri "b" :tombstones 4)])))
                 "Quire: 3 editor(s), 2 document(s), 1 of 2 peer link(s) up, in sync, 7 removed character(s) kept for peers; with otto (a, b), pia (a); documents in memory only; your key aaaa-bbbb; bob established, encrypted, key 3f1c-0a9e; tcp from 10.0.0.9:4 handshaking, NOT encrypted"))
  (should (equal (quire--status-summary '(:storage :null :summary (:editors 2 :documents 0 :links 1 :linksUp 1 :notYetSent 12 :removedKept 0 :people [])
                                          :peers (:fingerprint "aaaa" :links [] :documents [])))
                 "Quire: 2 editor(s), 0 document(s), 1 of 1 peer link(s) up, 12 character(s) not yet with peers; documents in memory only; your key aaaa"))
  (should (equal (quire--status-summary '(:storage :null :summary (:editors 2 :documents 0 :links 0 :linksUp 0 :notYetSent 0 :removedKept 0 :people [])
                                          :peers (:fingerprint "aaaa" :links [] :documents [])))
                 "Quire: 2 editor(s), 0 document(s), no peer links; documents in memory only; your key aaaa")))

(ert-deftest quire-test-file-save-and-outside-change ()
  "`save-buffer' is not taken for an outside change; an outside change is merged; `quire-save' writes."
  (let* ((binary (getenv "QUIRE_BINARY")) (socket (getenv "QUIRE_TEST_SOCKET"))
         (quire-command (list binary "attach" socket))
         (path (make-temp-file "quire-notes-" nil ".txt" "first\nsecond\n")))
    (with-current-buffer (find-file-noselect path)
      (quire-share "file.el.txt")
      (goto-char (point-max))
      (insert "typed in Emacs\n")
      (save-buffer)
      (with-temp-file path (insert "first\nsecond\ntyped in Emacs\nadded outside\n"))
      (quire-save)
      (should (quire-test--wait (lambda () (equal (buffer-string) "first\nsecond\ntyped in Emacs\nadded outside\n"))))
      (should (equal (with-temp-buffer (insert-file-contents path) (buffer-string))
                     "first\nsecond\ntyped in Emacs\nadded outside\n"))
      (should (quire-test--wait (lambda () (not (buffer-modified-p)))))
      (quire-stop)
      (set-buffer-modified-p nil)
      (kill-buffer))
    (delete-file path)))

(ert-deftest quire-test-dos-coding-save-and-crlf-revert-send-no-carriage-returns ()
  "`set-buffer-file-coding-system' to dos then `save-buffer' writes CRLF and the
document holds no \\r; back to unix and saved, the file rewritten outside in
CRLF (a line added) and `revert-buffer' brings the line in once, with no \\r;
the other editor types between each, and its text is there once."
  (quire-test--with-own-daemon ".dos"
    (let* ((uri "dos.el.txt")
           (path (make-temp-file "quire-dos-" nil ".txt" "one <A17> é\ntwo f(x) 日本\n")))
      (with-current-buffer (find-file-noselect path)
        (unwind-protect
            (progn
              (quire-share uri)
              (let ((other (quire-test--editor socket uri)))
                (cl-flet ((check ()
                            (should (quire-test--agree other uri))
                            (should-not (string-match-p "[\r\ufeff]" (quire-test--text-of other uri)))
                            (dolist (token '("<A17>" "é" "f(x)" "日本"))
                              (should (equal (list token (quire-test--count token (quire--text)))
                                             (list token 1))))))
                  (unwind-protect
                      (progn
                        (check)
                        (quire-test--remote-insert other uri "one" "<O1> ")
                        (check)
                        (set-buffer-file-coding-system 'utf-8-dos)
                        (save-buffer)
                        (check)
                        (should (equal (quire-test--file-bytes path) "<O1> one <A17> é\r\ntwo f(x) 日本\r\n"))
                        (quire-test--remote-insert other uri "<O1>" "<O2> ")
                        (check)
                        ;; Back to unix by hand, then CRLF from outside: the revert may keep the
                        ;; chosen coding system, but no \r reaches the document.
                        (set-buffer-file-coding-system 'utf-8-unix)
                        (save-buffer)
                        (should (equal (quire-test--file-bytes path) "<O2> <O1> one <A17> é\ntwo f(x) 日本\n"))
                        (let ((coding-system-for-write 'utf-8-dos))
                          (with-temp-file path
                            (insert (replace-regexp-in-string "\r" "" (quire-test--file-bytes path)) "outside <D4> ü\n")))
                        (set-file-times path (time-add (current-time) 100))
                        (revert-buffer t t)
                        (check)
                        (should (= (quire-test--count "<D4>" (quire--text)) 1))
                        (should (= (quire-test--count "<O2>" (quire--text)) 1)))
                    (jsonrpc-shutdown other)))))
          (set-buffer-modified-p nil)
          (kill-buffer)
          (delete-file path))))))

(defun quire-test--file-bytes (path)
  "PATH's content, decoded as UTF-8 with its line ends kept as they are."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8-unix)) (insert-file-contents path))
    (buffer-string)))

;; `write-file' (C-x C-w) and `set-visited-file-name' bind the document to the new file.

(ert-deftest quire-test-the-daemon-names-a-shared-file ()
  "A file shared with no name given is opened with `file' and no `uri': the
document is named by the file's path from its project root (.git or
.quire-root above it), and another editor opening the same file the same way
joins that document, each seeing what the other types.  A buffer with no file
is named after the buffer; a name given is used as it is."
  (quire-test--with-own-daemon ".naming"
    (let* ((project (make-temp-file "quire-project" t))
           (rooted (make-temp-file "quire-rooted" t))
           (path (expand-file-name "src/a.py" project))
           (other nil) (requests nil))
      (make-directory (expand-file-name ".git" project))
      (make-directory (expand-file-name "src" project))
      (with-temp-file path (insert "def a():\n    return 1\n"))
      (make-directory (expand-file-name "docs" rooted))
      (with-temp-file (expand-file-name ".quire-root" rooted))
      (with-temp-file (expand-file-name "docs/plan.txt" rooted) (insert "plan\n"))
      (unwind-protect
          (with-current-buffer (find-file-noselect path)
            (cl-letf* ((request (symbol-function 'quire--request))
                       ((symbol-function 'quire--request)
                        (lambda (method params &rest more) (push (cons method params) requests) (apply request method params more))))
              (call-interactively #'quire-share))
            (let ((open (cdr (assq :document/open requests))))
              (should open)
              (should-not (plist-member open :uri))
              (should (equal (plist-get open :file) path)))
            (should quire-mode)
            (should (equal (plist-get quire--state :uri) "src/a.py"))
            (should (quire-test--said "Quire: sharing \"src/a.py\""))
            ;; The other editor opens the file by its path: the same document.
            (setq other (quire-test--probe socket))
            (let ((opened (jsonrpc-request other :document/open (list :file path :text "def a():\n    return 1\n"))))
              (should (equal (plist-get opened :uri) "src/a.py"))
              (should (eq (plist-get opened :created) :json-false))
              (jsonrpc-request other :document/edit
                               (list :uri "src/a.py" :epoch (plist-get opened :epoch) :revision 0
                                     :changes (vector (list :range (list :start '(:line 0 :character 0) :end '(:line 0 :character 0))
                                                            :text "# otto\n")))))
            (should (quire-test--wait (lambda () (equal (quire--text) "# otto\ndef a():\n    return 1\n"))))
            (goto-char (point-max))
            (insert "# emacs\n")
            (should (quire-test--wait (lambda () (equal (quire-test--text-of other "src/a.py")
                                                        "# otto\ndef a():\n    return 1\n# emacs\n"))))
            (set-buffer-modified-p nil)
            (kill-buffer))
        (when other (jsonrpc-shutdown other)))
      ;; A real Vim (the Vim client, headless) opens another file of the project while Emacs
      ;; shares it: both name it src/c.py and see each other's lines.  Skipped without vim.
      (when (executable-find "vim")
        (let* ((c (expand-file-name "src/c.py" project))
               (name-file (expand-file-name "vim-name.txt" project))
               (text-file (expand-file-name "vim-text.txt" project))
               (script (expand-file-name "vim-join.vim" project))
               (vim nil))
          (with-temp-file c (insert "c = 3\n"))
          (with-temp-file script
            (insert "vim9script\nset hidden\n"
                    (format "g:quire_command = [%S, 'attach', %S]\n" binary socket)
                    "runtime plugin/quire.vim\n"
                    (format "execute 'edit ' .. fnameescape(%S)\n" c)
                    "QuireShare\n"
                    (format "writefile([quire#SharedName()], %S)\n" name-file)
                    "append(0, '# vim')\nlistener_flush()\n"
                    "var waited = 0\n"
                    "while getline('$') !=# '# emacs' && waited < 15000\n  sleep 10m\n  waited += 10\nendwhile\n"
                    (format "writefile(getline(1, '$'), %S)\n" text-file)
                    "qall!\n"))
          (with-current-buffer (find-file-noselect c)
            (quire-share)
            (should (equal (plist-get quire--state :uri) "src/c.py"))
            (unwind-protect
                (progn
                  (setq vim (make-process :name "vim" :noquery t :connection-type 'pipe
                                          :command (list "vim" "-u" "NONE" "-i" "NONE" "-N" "--not-a-term" "-n"
                                                         "--cmd" (concat "set rtp^=" (expand-file-name "../../vim" quire-test--directory))
                                                         "-S" script)))
                  (process-send-eof vim)   ; as from /dev/null: no key ever waits for an answer
                  ;; Vim's writefile() is not atomic: wait for the whole line, not the file.
                  (should (quire-test--wait (lambda () (and (file-exists-p name-file)
                                                            (string-suffix-p "\n" (quire-test--file-text name-file))))
                                            15))
                  (should (equal (string-trim (quire-test--file-text name-file)) "src/c.py"))
                  (should (or (quire-test--wait (lambda () (equal (quire--text) "# vim\nc = 3\n")) 10)
                              (progn (message "Emacs shows %S" (quire--text)) nil)))
                  (goto-char (point-max))
                  (insert "# emacs\n")
                  (should (quire-test--wait (lambda () (and (file-exists-p text-file)
                                                            (string-suffix-p "# emacs\n" (quire-test--file-text text-file))))
                                            15))
                  (should (equal (quire-test--file-text text-file) "# vim\nc = 3\n# emacs\n"))
                  (should (equal (quire--text) "# vim\nc = 3\n# emacs\n")))
              (when (process-live-p vim) (kill-process vim))
              (set-buffer-modified-p nil)
              (kill-buffer)))))
      (with-current-buffer (find-file-noselect (expand-file-name "docs/plan.txt" rooted))
        (quire-share)
        (should (equal (plist-get quire--state :uri) "docs/plan.txt"))
        (kill-buffer))
      (delete-directory project t)
      (delete-directory rooted t)
      (with-current-buffer (get-buffer-create "quire-no-file")
        (insert "no file\n")
        (quire-share)
        (should (equal (plist-get quire--state :uri) "quire-no-file"))
        (kill-buffer))
      (insert "named\n")
      (quire-share "chosen.el.txt")
      (should (equal (plist-get quire--state :uri) "chosen.el.txt")))))

(defun quire-test--file-text (path)
  "The text of the file at PATH."
  (with-temp-buffer (insert-file-contents path) (buffer-string)))

(ert-deftest quire-test-write-file-binds-the-document-to-the-new-file ()
  "A line typed, then `write-file' to another name, then `quire-save': the line
stays in the shared document and is in the new file; the old file, which was
not written, is left alone and no `document/saved' names it; the document is
bound to the new file from then on (a change to the old file is not merged,
one to the new file is), and `revert-buffer' still shows the shared text."
  (quire-test--with-own-daemon ".write-file"
    (let* ((uri "written.el.txt")
           (old (make-temp-file "quire-old-" nil ".txt" "first <A1>\n"))
           (new (concat (file-name-sans-extension old) "-new.txt"))
           (saved nil))
      (unwind-protect
          (with-current-buffer (find-file-noselect old)
            (quire-share uri)
            (let ((other (quire-test--editor socket uri)))
              (unwind-protect
                  (cl-letf* ((notify (symbol-function 'jsonrpc-notify))
                             ((symbol-function 'jsonrpc-notify)
                              (lambda (connection method params)
                                ;; Each `document/saved' with the file the document was then bound to.
                                (when (eq method :document/saved)
                                  (push (plist-get quire--state :file) saved))
                                (funcall notify connection method params))))
                    (should (quire-test--agree other uri))
                    (goto-char (point-max))
                    (insert "typed <T1> f(x)\n")
                    (should (quire-test--agree other uri))
                    (write-file new)
                    (should quire-mode)
                    (should (equal (plist-get quire--state :file) (expand-file-name new)))
                    (should (equal (quire-test--file-text new) "first <A1>\ntyped <T1> f(x)\n"))
                    (should (equal (quire-test--file-text old) "first <A1>\n"))
                    (should (equal saved (list (expand-file-name new))))
                    (should (eq revert-buffer-function #'quire--revert-buffer))
                    ;; The other person types; the daemon writes the bound file: nothing is lost.
                    (quire-test--remote-insert other uri "first" "<O2> ")
                    (should (quire-test--wait (lambda () (string-prefix-p "<O2> " (quire--text)))))
                    (quire-save)
                    (should (quire-test--agree other uri))
                    (should (equal (quire-test--text-of other uri) "<O2> first <A1>\ntyped <T1> f(x)\n"))
                    (should (equal (quire-test--file-text new) "<O2> first <A1>\ntyped <T1> f(x)\n"))
                    (should (equal (quire-test--file-text old) "first <A1>\n"))
                    ;; The old file is no longer the document's; the new one is.
                    (with-temp-file old (insert "first <A1>\nold file changed outside\n"))
                    (with-temp-file new (insert "<O2> first <A1>\ntyped <T1> f(x)\nnew file changed outside\n"))
                    (quire-save)
                    (should (quire-test--wait (lambda () (equal (quire--text) "<O2> first <A1>\ntyped <T1> f(x)\nnew file changed outside\n"))))
                    (should (quire-test--agree other uri))
                    (revert-buffer t t)
                    (should quire-mode)
                    (should (quire-test--agree other uri))
                    ;; `set-visited-file-name' alone (no write) binds too, and sends no `document/saved'.
                    (setq saved nil)
                    (set-visited-file-name old t)
                    (should (equal (plist-get quire--state :file) (expand-file-name old)))
                    (should-not saved)
                    (should (equal (quire-test--file-text old) "first <A1>\nold file changed outside\n"))
                    (goto-char (point-max))
                    (insert "after <Z9>\n")
                    (should (quire-test--agree other uri))
                    (quire-save)
                    (should (equal (quire-test--file-text old) (quire--text)))
                    (should (equal (quire-test--text-of other uri)
                                   "<O2> first <A1>\ntyped <T1> f(x)\nnew file changed outside\nafter <Z9>\n")))
                (jsonrpc-shutdown other)))
            (quire-stop)
            (set-buffer-modified-p nil)
            (kill-buffer))
        (dolist (file (list old new)) (ignore-errors (delete-file file)))))))

(ert-deftest quire-test-write-file-with-a-partner-typing-merges-and-asks-nothing ()
  "`write-file' while another person types: their edit reaches the daemon
around the rebind, and a line typed here was just sent.  The close keeps the
view and the open names it with the epoch and revision (no base), so both
merge, nothing is asked, and the undo history goes on."
  (quire-test--with-own-daemon ".write-file-typing"
    (let* ((uri "typing.el.txt")
           (old (make-temp-file "quire-old-" nil ".txt" "first <A1>\n"))
           (new (concat (file-name-sans-extension old) "-new.txt"))
           (sent nil))
      (unwind-protect
          (with-current-buffer (find-file-noselect old)
            (quire-share uri)
            (let ((other (quire-test--editor socket uri)))
              (unwind-protect
                  (progn
                    (should (quire-test--agree other uri))
                    (goto-char (point-max))
                    (insert "typed <T1>\n")
                    (quire-test--remote-insert other uri "first" "<W0> " t)   ; not waited for
                    (cl-letf* ((request (symbol-function 'quire--request))
                               ((symbol-function 'quire--request)
                                (lambda (method params &rest more)
                                  (push (cons method params) sent)
                                  (apply request method params more)))
                               ((symbol-function 'read-multiple-choice) (lambda (&rest _) (error "Asked"))))
                      (write-file new))
                    (should quire-mode)
                    (should (equal (plist-get quire--state :file) (expand-file-name new)))
                    (should (eq (plist-get (alist-get :document/close sent) :keepView) t))
                    (let ((open (alist-get :document/open sent)))
                      (should (stringp (plist-get open :view)))
                      (should (integerp (plist-get open :revision)))
                      (should-not (plist-member open :base)))
                    (should (quire-test--wait (lambda () (string-prefix-p "<W0> first" (quire--text)))))
                    (should (quire-test--agree other uri))
                    (should (equal (quire-test--text-of other uri) "<W0> first <A1>\ntyped <T1>\n"))
                    ;; The undo history went on: the line typed before `write-file' is undone.
                    (quire-undo)
                    (should (quire-test--wait (lambda () (equal (quire--text) "<W0> first <A1>\n"))))
                    (should (quire-test--agree other uri)))
                (jsonrpc-shutdown other)))
            (quire-stop)
            (set-buffer-modified-p nil)
            (kill-buffer))
        (dolist (file (list old new)) (ignore-errors (delete-file file)))))))

(defconst quire-test--foreign-server "
import json, os, signal, sys
def read():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        key, _, value = line.partition(b':')
        if key.strip().lower() == b'content-length':
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))
def write(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b'Content-Length: %d\\r\\n\\r\\n' % len(body) + body)
    sys.stdout.buffer.flush()
waiting = None
while True:
    message = read()
    if 'id' in message:
        waiting = message['id']
    elif message.get('method') == 'go':
        write({'jsonrpc': '2.0', 'id': waiting, 'result': 'theirs'})
        os.kill(message['params']['pid'], signal.SIGCONT)
"
  "Another package's JSON-RPC server: it answers a request when told `go', then
lets the process `go' names run on (SIGCONT).")

(ert-deftest quire-test-a-resync-inside-another-packages-blocking-request-keeps-its-reply ()
  "Another package waits in `jsonrpc-request' when a timer of ours resyncs, and
its reply comes first.  `jsonrpc-request' ends its wait by a `throw', which
used to unwind through our resync's wait: the daemon had resynced, its reply
was dropped, and the buffer stayed at an epoch the daemon had ended.  Here our
daemon is stopped until the other server has answered, so the other reply is
certainly first; ours must still be read, and theirs too.  (The daemon, not
the bridge Emacs writes to: Emacs marks a child it sees stopped as not
running and refuses to write to it.)"
  (quire-test--with-own-daemon ".nested"
    (insert "one <A1>\ntwo f(x)\n")
    (quire-share "nested.el.txt")
    (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "nested.el.txt")
                                                "one <A1>\ntwo f(x)\n"))))
    (let* ((foreign (jsonrpc-process-connection
                     :name (quire-test--unique-name "foreign")
                     :process (make-process :name "foreign" :command (list "python3" "-c" quire-test--foreign-server)
                                            :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t)
                     :notification-dispatcher #'ignore :request-dispatcher #'ignore))
           (buffer (current-buffer))
           (epoch (plist-get quire--state :epoch))
           (resynced nil))
      (unwind-protect
          (progn
            ;; Text the daemon does not have, which the resync replaces.
            (let ((inhibit-modification-hooks t)) (goto-char (point-min)) (insert "garbled "))
            (signal-process (process-id daemon) 'SIGSTOP)
            (run-at-time 0 nil (lambda ()
                                 (jsonrpc-notify foreign :go (list :pid (process-id daemon)))
                                 (with-current-buffer buffer (quire-resync))
                                 (setq resynced t)))
            (should (equal (jsonrpc-request foreign :wait '(:from "another package")) "theirs"))
            (should (quire-test--wait (lambda () resynced)))
            (should (equal (buffer-string) "one <A1>\ntwo f(x)\n"))
            (should (> (plist-get quire--state :epoch) epoch))
            ;; Editing goes on in the new epoch.
            (goto-char (point-max))
            (insert "three <C3>\n")
            (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "nested.el.txt")
                                                        "one <A1>\ntwo f(x)\nthree <C3>\n")))))
        (ignore-errors (signal-process (process-id daemon) 'SIGCONT))
        (ignore-errors (jsonrpc-shutdown foreign))))))

(ert-deftest quire-test-requests-never-wait-inside-the-daemons-process-filter ()
  "A daemon edit that does not fit the buffer asks for a resync while its
notification is being handled, inside the daemon's process filter.  Waiting
for a reply there would run the filter inside itself; the resync waits until
the notification is over, and brings the buffer to the daemon's text."
  (quire-test--with-own-daemon ".filter"
    (insert "one <A1>\ntwo f(x)\n")
    (quire-share "filter.el.txt")
    (let ((other (quire-test--editor socket "filter.el.txt")))
      (unwind-protect
          (progn
            (should (quire-test--agree other "filter.el.txt"))
            (should-error (let ((quire--in-filter t)) (quire--request :document/list (make-hash-table))))
            ;; Lines the daemon still has go here, unreported: its next edit does not fit.
            (let ((inhibit-modification-hooks t)) (erase-buffer) (insert "x"))
            (quire-test--remote-insert other "filter.el.txt" "f(x)" "<B2> ")
            (should (quire-test--wait (lambda () (equal (quire--text) "one <A1>\ntwo <B2> f(x)\n"))))
            (should (quire-test--agree other "filter.el.txt"))
            (goto-char (point-max))
            (insert "three\n")
            (should (quire-test--wait (lambda () (equal (quire-test--text-of other "filter.el.txt")
                                                        "one <A1>\ntwo <B2> f(x)\nthree\n")))))
        (jsonrpc-shutdown other)))))

;; Shared text never sets local variables, whatever reads it again.

(defvar quire-test--evaluated nil "Set by an `eval:' local variable that should never run.")

(ert-deftest quire-test-shared-text-sets-no-local-variables ()
  "A `Local Variables:' block (and a -*- line) typed by another person into
shared text takes no effect on any path that reads or re-initialises the
buffer: `normal-mode' (as a command and as `find-file' runs it), a major
mode set again, `set-visited-file-name', `revert-buffer' and
`find-alternate-file' (whose new buffer reads the file before it takes
the document over).  Even with `enable-local-variables' at :all, which
applies everything without asking; a file that is not shared still gets
its local variables."
  (quire-test--with-own-daemon ".locals"
    (let* ((uri "locals.el.txt")
           (path (make-temp-file "quire-locals-" nil ".txt" "plain text <A1>\n<END>\n"))
           (elsewhere (make-temp-file "quire-locals-" nil ".txt"))
           (block "Local Variables:\nfill-column: 7\neval: (setq quire-test--evaluated t)\nEnd:\n")
           (enable-local-variables :all)
           (untouched (lambda ()
                        (should quire-mode)
                        (should-not (eql fill-column 7))
                        (should-not quire-test--evaluated)
                        (should-not (derived-mode-p 'emacs-lisp-mode)))))
      (setq quire-test--evaluated nil)
      (unwind-protect
          (with-current-buffer (find-file-noselect path)
            (quire-share uri)
            (let ((other (quire-test--editor socket uri)))
              (unwind-protect
                  (progn
                    (should (quire-test--agree other uri))
                    (quire-test--remote-insert other uri "plain" "-*- mode: emacs-lisp -*- ")
                    (quire-test--remote-insert other uri "<END>" block)
                    (should (quire-test--wait (lambda () (string-match-p "End:\n<END>" (quire--text)))))
                    (normal-mode)
                    (funcall untouched)
                    (normal-mode t)
                    (funcall untouched)
                    (text-mode)
                    (funcall untouched)
                    ;; Saved with the block in it, as anyone may do.
                    (save-buffer)
                    (should (string-match-p "fill-column: 7" (quire-test--file-text path)))
                    (revert-buffer t t)
                    (funcall untouched)
                    (set-visited-file-name path t)
                    (funcall untouched)
                    (save-buffer)
                    (find-alternate-file path)
                    (should (equal (plist-get quire--state :uri) uri))
                    (funcall untouched)
                    (should (quire-test--agree other uri))
                    (insert "<W1>")
                    (should (quire-test--agree other uri))
                    ;; Not shared: the same text applies as usual.
                    (let ((text (quire--text))) (with-temp-file elsewhere (insert text)))
                    (with-current-buffer (find-file-noselect elsewhere)
                      (should (eql fill-column 7))
                      (should (derived-mode-p 'emacs-lisp-mode))
                      (should quire-test--evaluated)
                      (setq quire-test--evaluated nil)
                      (kill-buffer)))
                (jsonrpc-shutdown other)))
            (quire-stop)
            (set-buffer-modified-p nil)
            (kill-buffer))
        (setq quire-test--evaluated nil)
        (dolist (file (list path elsewhere)) (ignore-errors (delete-file file)))))))

;;; Every command reaches the daemon as what it did

(defun quire-test--editor (socket uri)
  "A second editor on the daemon at SOCKET with URI open, counting the daemon's edits.
Its revision (how many daemon edits it was sent) is its process's `revision'."
  (let* ((process (make-process :name "editor" :command (list (getenv "QUIRE_BINARY") "attach" socket)
                                :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t))
         (connection (jsonrpc-process-connection
                      :name (quire-test--unique-name "editor") :process process
                      :notification-dispatcher
                      (lambda (_connection method params)
                        ;; As a client applies them: only one based on every edit it sent (the
                        ;; daemon sends again, rebased, what it sent before reading one of them).
                        (when (and (eq method 'document/edit) (equal (plist-get params :uri) uri)
                                   (equal (plist-get params :revision) (process-get process 'sent)))
                          (process-put process 'revision (1+ (process-get process 'revision)))))
                      :request-dispatcher #'ignore)))
    (process-put process 'revision 0)
    (process-put process 'sent 0)
    (jsonrpc-request connection :initialize '(:user (:name "otto") :capabilities (:general (:positionEncodings ["utf-32"]))))
    (jsonrpc-request connection :document/open (list :uri uri :text ""))
    connection))

(defun quire-test--text-of (editor uri)
  "URI's text as the daemon has sent it to EDITOR."
  (plist-get (jsonrpc-request editor :document/text (list :uri uri)) :text))

(defvar quire-test--refused nil "Errors the daemon answered `async' remote insertions with.")

(defun quire-test--remote-insert (editor uri at text &optional notify)
  "Have EDITOR insert TEXT in URI before the first occurrence of AT.
As a notification when NOTIFY, so that it is not waited for; when NOTIFY is
`async', as a request not waited for, an error reply added to `quire-test--refused'."
  (let* ((old (quire-test--text-of editor uri))
         (offset (string-search at old))
         (before (substring old 0 offset))
         (line (cl-count ?\n before))
         (position (list :line line :character (- offset (if (zerop line) 0 (1+ (cl-position ?\n before :from-end t))))))
         (params (list :uri uri :revision (process-get (jsonrpc--process editor) 'revision)
                       :changes (vector (list :range (list :start position :end position) :text text)))))
    ;; Its editor revision, which the daemon's next edits for it are based on.
    (process-put (jsonrpc--process editor) 'sent (1+ (or (process-get (jsonrpc--process editor) 'sent) 0)))
    (cond ((eq notify 'async)
           (jsonrpc-async-request editor :document/edit params
                                  :success-fn #'ignore
                                  :error-fn (lambda (error) (push (list text error) quire-test--refused))
                                  :timeout-fn (lambda () (push (list text 'timeout) quire-test--refused))))
          (notify (jsonrpc-notify editor :document/edit params))
          (t (jsonrpc-request editor :document/edit params)))))

(defun quire-test--agree (editor uri)
  "Wait until the daemon's text of URI is the buffer's; return whether it is.
When it is not, both are shown."
  (let ((compared nil))
    (or (quire-test--wait (lambda ()
                            (let ((daemon (quire-test--text-of editor uri)))
                              (push (list (float-time) (quire--text) daemon (buffer-name)) compared)
                              (equal daemon (quire--text)))))
        (progn
          ;; What was compared, last first: a flapping text shows up here.
          (dolist (entry (seq-take compared 4))
            (message "at %.3f in %s, buffer:\n%s\ndaemon:\n%s" (nth 0 entry) (nth 3 entry) (nth 1 entry) (nth 2 entry)))
          (message "now in %s, buffer:\n%s\ndaemon:\n%s\nstate: %S" (buffer-name) (quire--text)
                   (quire-test--text-of editor uri) quire--state)
          nil))))

(defmacro quire-test--recording-changes (&rest body)
  "Run BODY; return the changes the client sent meanwhile, oldest first.
What BODY left held is sent at its end, as at the end of a command."
  `(let ((sent nil))
     (cl-letf* ((send (symbol-function 'quire--send-edit))
                ((symbol-function 'quire--send-edit) (lambda (change) (push change sent) (funcall send change))))
       ,@body
       (quire--flush-all))
     (nreverse sent)))

(ert-deftest quire-test-case-fill-and-other-commands-send-what-they-did ()
  "Case, fill, transpose, indent, comment, whitespace, kill/yank and replace commands.
Each one's changes reach the daemon as it made them (checked against the
daemon's text), on code-like tokens as well as words; `capitalize-word'
announces the whole word before its change and changes one character."
  (quire-test--with-own-daemon ".commands"
    (let ((uri "commands.el.txt"))
      (insert "hello <A17> world\nfoo f(x) \"s\" bar\n\n"
              "one <B2> two f(y) three \"t\" four <C3> five g(z)\n"
              "six \"u\" seven <D4> eight h(w) nine <E5>\n"
              "ten i(v) eleven <F6> twelve \"w\"\n\n"
              "  trailing  \t\n;; end <Z9>\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri)))
        (unwind-protect
            ;; Every change goes as a range: none needs the whole text.
            (should-not
             (seq-remove
              (lambda (change) (plist-get change :range))
              (quire-test--recording-changes
               (should (quire-test--agree other uri))
               ;; M-c on "hello": the old "h" and nothing more is replaced.
               (goto-char (point-min))
               (should (equal (quire-test--recording-changes (capitalize-word 1))
                              '((:range (:start (:line 0 :character 0) :end (:line 0 :character 1)) :text "H"))))
               (should (quire-test--agree other uri))
               (should (string-prefix-p "Hello <A17> world\n" (quire-test--text-of other uri)))
               (forward-line 1)
               (upcase-word 1)
               (should (quire-test--agree other uri))
               (should (string-prefix-p "Hello <A17> world\nFOO f(x)" (quire-test--text-of other uri)))
               (upcase-word 1)           ; f(x): a word inside punctuation
               (capitalize-word 1)
               (downcase-word -2)
               (should (quire-test--agree other uri))
               (upcase-region (point-min) (line-end-position))
               (should (quire-test--agree other uri))
               (should (string-prefix-p "HELLO <A17> WORLD\nFOO F(X) \"S\" BAR\n" (quire-test--text-of other uri)))
               (downcase-region (point-min) (point-max))
               (should (quire-test--agree other uri))
               ;; transpose-words on "<a17> world", then transpose-chars and -lines.
               (goto-char (point-min))
               (search-forward "<a17")
               (transpose-words 1)
               (should (quire-test--agree other uri))
               (should (string-prefix-p "hello <world> a17\n" (quire-test--text-of other uri)))
               (transpose-chars 1)
               (transpose-lines 1)
               (should (quire-test--agree other uri))
               ;; M-q on a three-line paragraph.
               (goto-char (point-min))
               (search-forward "<b2>")
               (let ((fill-column 22)) (fill-paragraph))
               (should (quire-test--agree other uri))
               (should (string-match-p "one <b2> two f(y)\nthree \"t\" four <c3>\n" (quire-test--text-of other uri)))
               (let ((fill-column 70)) (fill-paragraph))
               (should (quire-test--agree other uri))
               (should (string-match-p "ten i(v) eleven <f6> twelve \"w\"\n" (quire-test--text-of other uri)))
               ;; A major mode set again resets local variables: the buffer stays shared.
               (emacs-lisp-mode)
               (should quire-mode)
               ;; Indentation, comments, trailing whitespace.
               (let ((indent-tabs-mode nil))
                 (indent-rigidly (point-min) (point-max) 2)
                 (should (quire-test--agree other uri))
                 (indent-region (point-min) (point-max))
                 (should (quire-test--agree other uri))
                 (indent-region (point-min) (point-max) 4)
                 (should (quire-test--agree other uri))
                 (comment-region (point-min) (point-max))
                 (should (quire-test--agree other uri))
                 (uncomment-region (point-min) (point-max))
                 (should (quire-test--agree other uri)))
               (delete-trailing-whitespace)
               (should (quire-test--agree other uri))
               ;; Kill and yank, replace.
               (goto-char (point-min))
               (kill-line 2)
               (goto-char (point-max))
               (yank)
               (should (quire-test--agree other uri))
               (replace-string "<e5>" "<E55> f(\"q\")" nil (point-min) (point-max))
               (goto-char (point-min))
               (perform-replace "f\\((.)\\)" "g\\1" nil t nil)
               (should (quire-test--agree other uri))
               (should (string-match-p "<E55> f(\"q\") " (quire--text)))
               (should (string-match-p "7foo g(x) " (quire--text)))
               (goto-char (point-min))
               (zap-to-char 1 ?>)
               (just-one-space)
               (should (quire-test--agree other uri))
               ;; Region commands that report their changes in their own ways.
               (subst-char-in-region (point-min) (point-max) ?< ?{)
               (should (quire-test--agree other uri))
               (capitalize-region (point-min) (point-max))
               (upcase-initials-region (point-min) (point-max))
               (should (quire-test--agree other uri))
               (goto-char (point-min))
               (forward-line 2)
               (transpose-regions (point-min) (+ (point-min) 4) (point) (+ (point) 6))
               (should (quire-test--agree other uri))
               (sort-lines nil (point-min) (point-max))
               (reverse-region (point-min) (point-max))
               (should (quire-test--agree other uri))
               (goto-char (point-min))
               (forward-line 2)
               (delete-indentation)
               (tabify (point-min) (point-max))
               (untabify (point-min) (point-max))
               (should (quire-test--agree other uri))
               (let ((fill-column 30)) (fill-region (point-min) (point-max)))
               (should (quire-test--agree other uri))
               (should (string-match-p "{E55> F(\"Q\")" (quire--text))))))
          (jsonrpc-shutdown other))))))

(defun quire-test--keys (keys)
  "Run KEYS (a key vector or string) as typed in the current buffer, shown in a window.
Through the command loop, so `pre-command-hook' and `post-command-hook' run."
  (let ((buffer (current-buffer)))
    (save-window-excursion
      (switch-to-buffer buffer)
      (execute-kbd-macro keys))
    (set-buffer buffer)))

(defmacro quire-test--while-otto-types (other uri before token &rest body)
  "Have OTHER insert TOKEN in URI before BEFORE, unseen, then run BODY as a command.
OTHER's edit is sent as a notification and not read before BODY runs, so BODY
changes a buffer that has not seen it, as when two people type at once."
  (declare (indent 4))
  ;; First the buffer and OTHER agree: every daemon edit for it has reached it, so the text it
  ;; positions TOKEN in is the one its revision names.
  `(progn
     (should (quire-test--agree ,other ,uri))
     (quire-test--remote-insert ,other ,uri ,before ,token 'async)
     ,@body))

(ert-deftest quire-test-region-commands-on-multi-byte-text-while-another-types ()
  "Rectangles, region replacement, case, NFC, filters, line commands and typing
helpers on multi-byte text (two-byte, double-width, combining marks, an emoji,
a tab), each while the other editor types a token the buffer has not seen.
The daemon's text is the buffer's after each, every token there once (or as
often as the command made it), nothing resynced, and every change sent as a
range."
  (quire-test--with-own-daemon ".multibyte"
    (let ((uri "multibyte.el.txt")
          (input (make-temp-file "quire-insert")))
      (let ((coding-system-for-write 'utf-8-unix)) (with-temp-file input (insert "ins 語 <I1>\n")))
      (insert "é1 日本 <A17>\nx̃y 😀 f(x)\n\tcafé \"s\"\nÿ <B2> 日\nnaïve g(y, z)\nstraße <C3>\nend\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri))
            (once '("<A17>" "f(x)" "\"s\"" "<B2>" "g(y, z)" "<C3>" "😀" "日本")))
        (cl-flet ((agree-once (&rest more)
                    (should (quire-test--agree other uri))
                    (should-not quire-test--refused)
                    (setq once (append once more))
                    (dolist (token once)
                      (should (equal (list token (quire-test--count token (quire--text)) (quire--text))
                                     (list token 1 (quire--text)))))
                    (should (equal (plist-get quire--state :epoch) 0))))
          (unwind-protect
              (should-not
               (seq-remove
                (lambda (change) (plist-get change :range))
                (quire-test--recording-changes
                 (agree-once)
                 ;; kill-rectangle over a double-width character and two-byte ones, yank-rectangle.
                 (quire-test--while-otto-types other uri "<B2>" "<P1> "
                   (goto-char (point-min))
                   (let ((start (point)))
                     (forward-line 1)
                     (move-to-column 3)
                     (kill-rectangle start (point))))
                 (should (string-prefix-p "日本 <A17>\n😀 f(x)\n" (quire--text)))
                 (quire-test--while-otto-types other uri "f(x)" "<P2>"
                   (goto-char (point-max))
                   (yank-rectangle))
                 (agree-once "<P1>" "<P2>")
                 (should (string-match-p "<P2>f(x)" (quire--text)))
                 (should (string-suffix-p "end\né1 \nx̃y " (quire--text)))
                 ;; string-rectangle after a combining mark, the other typing in its column.
                 (quire-test--while-otto-types other uri "😀" "<P3>"
                   (goto-char (point-max))
                   (forward-line -1)
                   (let ((start (point)))
                     (forward-line 1)
                     (string-rectangle start (point) "|")))
                 (agree-once "<P3>")
                 (should (string-suffix-p "end\n|é1 \n|x̃y " (quire--text)))
                 ;; A regexp replaced over a region, the other typing inside a match.
                 (quire-test--while-otto-types other uri "(y, z)" "<P4>"
                   (goto-char (point-min))
                   (replace-regexp "\\([a-zé]+\\)(\\([^)]*\\))" "\\1[\\2]" nil (point-min) (point-max)))
                 (setq once (cl-set-difference once '("f(x)" "g(y, z)") :test #'equal))
                 (agree-once "<P4>")
                 (should (string-match-p "f\\[x\\]" (quire--text)))
                 ;; Case over a region where upcasing changes the length (ß -> SS).
                 (quire-test--while-otto-types other uri "<C3>" "<P5> "
                   (goto-char (point-min))
                   (search-forward "naïve")
                   (upcase-region (line-beginning-position) (line-end-position 2)))
                 (agree-once "<P5>")
                 (should (string-match-p "NAÏVE G" (quire--text)))
                 (should (string-match-p "STRASSE\\|STRAẞE" (quire--text)))
                 (capitalize-region (point-min) (save-excursion (goto-char (point-min)) (line-end-position)))
                 (agree-once)
                 ;; Decomposed é to composed, inside a word the other types after.
                 (goto-char (point-max))
                 (insert "\ncafe\u0301 ne\u0301 <D4>\n")
                 (agree-once "<D4>")
                 (quire-test--while-otto-types other uri "<D4>" "<P6>"
                   (ucs-normalize-NFC-region (line-beginning-position 0) (point-max)))
                 (agree-once "<P6>")
                 (should (string-match-p "café né <P6><D4>" (quire--text)))
                 ;; A shell filter replacing the region, insert-file-contents.
                 (quire-test--while-otto-types other uri "<A17>" "<P7>"
                   (shell-command-on-region (point-min) (point-max) "LC_ALL=C sort" nil t))
                 (agree-once "<P7>")
                 (quire-test--while-otto-types other uri "<B2>" "<P8>"
                   (goto-char (point-min))
                   (let ((coding-system-for-read 'utf-8)) (insert-file-contents input)))
                 (agree-once "<P8>" "<I1>")
                 (should (string-prefix-p "ins 語 <I1>\n" (quire--text)))
                 ;; Lines: duplicates, flush, keep, transpose.
                 (goto-char (point-min))
                 (insert "dup 日 <E5>\ndup 日 <E5>\n")
                 (quire-test--while-otto-types other uri "<I1>" "<P9>"
                   (delete-duplicate-lines (point-min) (point-max)))
                 (agree-once "<P9>" "<E5>")
                 (quire-test--while-otto-types other uri "<E5>" "<P10>"
                   (goto-char (point-min))
                   (flush-lines "^|" (point-min) (point-max)))
                 (agree-once "<P10>")
                 (should-not (string-match-p "^|" (quire--text)))
                 (quire-test--while-otto-types other uri "<P10>" "<P11>"
                   (goto-char (point-min))
                   (keep-lines "[<\"]" (point-min) (point-max)))
                 (agree-once "<P11>")
                 (quire-test--while-otto-types other uri "<I1>" "<P12>"
                   (goto-char (point-min))
                   (forward-line 1)
                   (transpose-lines 2))
                 (agree-once "<P12>")
                 ;; Typing helpers: electric pairs, dabbrev.
                 (goto-char (point-max))
                 (electric-pair-local-mode 1)
                 (quire-test--keys "k(")
                 (quire-test--keys "日")
                 (electric-pair-local-mode -1)
                 (agree-once)
                 (should (string-suffix-p "k(日)" (quire--text)))
                 (end-of-line)
                 (quire-test--keys " caf")
                 (quire-test--keys (kbd "M-/"))
                 (agree-once)
                 (should (string-suffix-p "k(日) café" (quire--text))))))
            (jsonrpc-shutdown other)
            (delete-file input)))))))

(defun quire-test--line-with (token)
  "The buffer's line holding TOKEN, or nil."
  (save-excursion
    (goto-char (point-min))
    (and (search-forward token nil t)
         (buffer-substring-no-properties (line-beginning-position) (line-end-position)))))

(defun quire-test--rewrite-first-line ()
  "Delete the first line's text and insert it again with its first word upcased.
As a formatter that erases and reinserts does: two changes at one point."
  (interactive)
  (goto-char (point-min))
  (let* ((end (line-end-position))
         (old (buffer-substring-no-properties (point) end))
         (word (progn (string-match "\\`[a-z]+" old) (match-string 0 old))))
    (delete-region (point) end)
    (insert (upcase word) (substring old (length word)))))

(defun quire-test--change-both-ends ()
  "Insert at the start of the first line and at the end of the last: two places apart."
  (interactive)
  (goto-char (point-min))
  (insert "[")
  (goto-char (point-max))
  (insert "]"))

(ert-deftest quire-test-a-command-that-deletes-then-inserts-sends-one-replacement ()
  "A command's changes that touch go as one replacement, so what a partner typed
inside a line the command left as it was stays in that line, once:
`shell-command-on-region' replacing several lines, and a command of Lisp
that deletes a line and inserts its new text.  Typing still goes as one edit
per key, changes apart in one command as separate edits, and a change made
by a timer goes out."
  (quire-test--with-own-daemon ".merge"
    (let ((uri "merge.el.txt"))
      (insert "alpha <A1> one\ngamma f(x) two\nbeta <B2> three\ndelta \"d\"\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri)))
        (unwind-protect
            (progn
              ;; A filter that rewrites the first line only, the partner typing in the third.
              (let ((sent (quire-test--recording-changes
                           (quire-test--while-otto-types other uri "<B2>" "<P7>"
                             (shell-command-on-region (point-min) (point-max) "sed -e s/alpha/omega/" nil t)))))
                (should (= (length sent) 1))
                (should (equal (plist-get (car sent) :range)
                               '(:start (:line 0 :character 0) :end (:line 4 :character 0)))))
              (should (quire-test--agree other uri))
              (should-not quire-test--refused)
              (should (equal (quire-test--count "<P7>" (quire--text)) 1))
              (should (equal (quire-test--line-with "<P7>") "beta <P7><B2> three"))
              (should (string-prefix-p "omega <A1> one\n" (quire--text)))
              ;; The same while the partner types inside a line's code-like token.
              (quire-test--while-otto-types other uri "x) two" "y, "
                (shell-command-on-region (point-min) (point-max) "sed -e s/omega/alpha/" nil t))
              (should (quire-test--agree other uri))
              (should (equal (quire-test--line-with "f(y, x)") "gamma f(y, x) two"))
              (should (equal (quire-test--count "f(y, x)" (quire--text)) 1))
              ;; A Lisp command deleting the first line's text and inserting its new text, through
              ;; the command loop: one replacement, the partner's token stays where it was typed.
              (use-local-map (let ((map (make-sparse-keymap)))
                               (define-key map (kbd "C-c r") #'quire-test--rewrite-first-line)
                               (define-key map (kbd "C-c b") #'quire-test--change-both-ends)
                               map))
              (let ((sent (quire-test--recording-changes
                           (quire-test--while-otto-types other uri "one\n" "<P8> "
                             (quire-test--keys (kbd "C-c r"))))))
                ;; One change, whatever the buffer had of the partner's text when the command ran.
                (should (= (length sent) 1))
                (should (equal (plist-get (plist-get (car sent) :range) :start) '(:line 0 :character 0)))
                (should (string-prefix-p "ALPHA <A1> " (plist-get (car sent) :text))))
              (should (quire-test--agree other uri))
              (should (equal (quire-test--line-with "<P8>") "ALPHA <A1> <P8> one"))
              (should (equal (quire-test--count "<P8>" (quire--text)) 1))
              ;; It is one undo step of the command's: undone, the partner's token stays.
              (quire-test--keys (kbd "C-/"))
              (should (quire-test--wait (lambda () (equal (quire-test--line-with "<P8>") "alpha <A1> <P8> one"))))
              (should (quire-test--agree other uri))
              ;; Changes apart in one command: two edits.
              (let ((sent (quire-test--recording-changes (quire-test--keys (kbd "C-c b")))))
                (should (equal (mapcar (lambda (change) (plist-get change :text)) sent) '("[" "]"))))
              (should (quire-test--agree other uri))
              (should (string-prefix-p "[alpha" (quire--text)))
              (should (string-suffix-p "\"d\"\n]" (quire--text)))
              ;; Typing: one edit per key, even where each key's text touches the last.
              (goto-char (point-min))
              (end-of-line)
              (let ((sent (quire-test--recording-changes (quire-test--keys "xyz"))))
                (should (equal (mapcar (lambda (change) (plist-get change :text)) sent) '("x" "y" "z"))))
              (should (quire-test--agree other uri))
              (should (string-prefix-p "[alpha <A1> <P8> onexyz\n" (quire--text)))
              ;; A timer's change (no command) goes out by itself, its touching changes as one.
              (let* ((buffer (current-buffer))
                     (sent (quire-test--recording-changes
                            (run-at-time 0 nil (lambda ()
                                                 (with-current-buffer buffer
                                                   (goto-char (point-min))
                                                   (delete-char 1)
                                                   (insert "{"))))
                            (should (quire-test--wait (lambda () (string-prefix-p "{alpha" (quire-test--text-of other uri))))))))
                (should (equal sent '((:range (:start (:line 0 :character 0) :end (:line 0 :character 1)) :text "{")))))
              (should (quire-test--agree other uri)))
          (jsonrpc-shutdown other))))))

;; A held change is a buffer-local variable, which a clone copies.
(ert-deftest quire-test-a-buffer-cloned-with-a-change-held-sends-it-once ()
  "A command of Lisp that changes a shared buffer and clones it
\(`clone-indirect-buffer') before its end: the change held is sent once, by
the buffer it was made in, not again by the clone (its next change, cursor
update or end); a change in the buffer and one after it in the clone, in
one command, each land where they were made; the partner's token stays
once where it was typed."
  (quire-test--with-own-daemon ".clone"
    (let ((uri "clone.el.txt"))
      (insert "alpha é1\ngamma <B2> 日本\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri)) (clone nil))
        (unwind-protect
            (progn
              (goto-char 3)
              (insert "H😀")
              (setq clone (clone-indirect-buffer "quire-clone" nil))
              (quire--flush-all)
              (should (quire-test--agree other uri))
              ;; The clone's own change, apart from the held one, and its cursor update.
              (with-current-buffer clone
                (goto-char (point-max))
                (insert "C1\n")
                (quire--flush-all)
                (quire--send-cursor))
              (should (quire-test--agree other uri))
              (should (equal (quire-test--text-of other uri) "alH😀pha é1\ngamma <B2> 日本\nC1\n"))
              (quire-test--remote-insert other uri "<B2>" "<P1>")
              (should (quire-test--wait (lambda () (string-match-p "<P1>" (quire--text)))))
              ;; In one command, a change held by the buffer and one made after it in the clone.
              (goto-char 3)
              (insert "Q")
              (with-current-buffer clone
                (goto-char (point-min))
                (end-of-line)
                (insert "R"))
              (quire--flush-all)
              (should (quire-test--agree other uri))
              (kill-buffer clone)
              (goto-char (point-min))
              (insert "B")
              (quire--flush-all)
              (should (quire-test--agree other uri))
              (should (equal (quire--text) "BalQH😀pha é1R\ngamma <P1><B2> 日本\nC1\n"))
              (should-not quire-test--refused))
          (when (buffer-live-p clone) (kill-buffer clone))
          (jsonrpc-shutdown other))))))

(ert-deftest quire-test-text-property-changes-send-nothing ()
  "Changing only text properties (`put-text-property', `add-face-text-property')
runs the change hooks but sends no edit, alone or touching a held change;
text inserted and removed again before it was sent (a cancelled
`atomic-change-group') sends nothing either."
  (quire-test--with-own-daemon ".props"
    (let ((uri "props.el.txt"))
      (insert "one é two\n日本 three\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri)))
        (unwind-protect
            (progn
              (should (equal (quire-test--recording-changes
                              (put-text-property 1 4 'face 'bold)
                              (add-face-text-property 12 14 'italic))
                             nil))
              ;; Touching a held insertion: the insertion alone goes.
              (should (equal (quire-test--recording-changes
                              (goto-char 5)
                              (insert "X")
                              (put-text-property 5 7 'face 'italic))
                             '((:range (:start (:line 0 :character 4) :end (:line 0 :character 4)) :text "X"))))
              (should (equal (quire-test--recording-changes
                              (goto-char 3)
                              (ignore-errors
                                (atomic-change-group
                                  (insert "YZ")
                                  (error "Cancelled"))))
                             nil))
              (should (quire-test--agree other uri))
              (should (equal (quire-test--text-of other uri) "one Xé two\n日本 three\n")))
          (jsonrpc-shutdown other))))))

(ert-deftest quire-test-a-change-in-an-indirect-buffer-reaches-the-daemon ()
  "Text changed in an indirect buffer of a shared buffer (`make-indirect-buffer',
as `org-tree-to-indirect-buffer' makes; narrowed there) reaches the daemon,
a deletion and the insertion at its place as one replacement; the partner's
token stays once where it was typed; the base buffer still sends its own."
  (quire-test--with-own-daemon ".indirect"
    (let ((uri "indirect.el.txt"))
      (insert "alpha é1\ngamma <B2> 日本\nend\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri))
            (indirect (make-indirect-buffer (current-buffer) "quire-indirect")))
        (unwind-protect
            (progn
              (with-current-buffer indirect
                (goto-char (point-min))
                (forward-line 1)
                (narrow-to-region (point) (line-end-position))
                (insert "I😀 ")
                (quire--flush-all))
              (should (quire-test--agree other uri))
              (should (equal (quire-test--text-of other uri) "alpha é1\nI😀 gamma <B2> 日本\nend\n"))
              (let ((sent (quire-test--recording-changes
                           (quire-test--while-otto-types other uri "<B2>" "<P1>"
                             (with-current-buffer indirect
                               (goto-char (point-min))
                               (delete-region (point) (+ (point) 8))
                               (insert "J😀 GAMMA"))))))
                (should (= (length sent) 1)))
              (should (quire-test--agree other uri))
              (should (equal (quire-test--line-with "<P1>") "J😀 GAMMA <P1><B2> 日本"))
              (goto-char (point-max))
              (insert "base\n")
              (quire--flush-all)
              (should (quire-test--agree other uri))
              (should (equal (quire--text) "alpha é1\nJ😀 GAMMA <P1><B2> 日本\nend\nbase\n"))
              (should-not quire-test--refused))
          (kill-buffer indirect)
          (jsonrpc-shutdown other))))))

(ert-deftest quire-test-a-change-held-as-emacs-exits-reaches-the-daemon ()
  "A batch Emacs (as a script run by `emacs --batch') shares a buffer, changes
it and calls `kill-emacs' at once: the change held reaches the daemon, though
Emacs kills `quire attach' as it exits."
  (quire-test--with-own-daemon ".exit"
    (let* ((script (format "%S" `(progn (require 'quire)
                                        (setq quire-command (list ,binary "attach" ,socket))
                                        (with-current-buffer (get-buffer-create "exiting")
                                          (insert "kept é\n")
                                          (quire-share "exit.el.txt")
                                          (goto-char (point-min))
                                          (insert "日本 last ")
                                          (kill-emacs 0)))))
           (output (generate-new-buffer " *exiting emacs*")))
      (unwind-protect
          (progn
            (should (equal (call-process (expand-file-name invocation-name invocation-directory) nil output nil
                                         "-Q" "--batch" "-L" (file-name-directory (locate-library "quire"))
                                         "--eval" script)
                           0))
            (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket "exit.el.txt")
                                                        "日本 last kept é\n")))))
        (kill-buffer output)))))

(ert-deftest quire-test-set-buffer-multibyte-sends-the-held-change-first ()
  "A change held when `set-buffer-multibyte' makes the buffer unibyte (positions
in bytes from then on) reaches the daemon as it was made: the held region,
in characters, is not read again in bytes."
  (quire-test--with-own-daemon ".unibyte"
    (let ((uri "unibyte.el.txt"))
      (insert "aé日\nb <B2>\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri)))
        (unwind-protect
            (progn
              (goto-char 2)
              (insert "ü")
              ;; The command ends with the buffer unibyte.
              (set-buffer-multibyte nil)
              (quire--flush-all)
              (should (quire-test--wait (lambda () (equal (quire-test--text-of other uri) "aüé日\nb <B2>\n"))))
              (set-buffer-multibyte t)
              (goto-char (point-min))
              (insert "Z")
              (quire--flush-all)
              (should (quire-test--agree other uri))
              (should (equal (quire--text) "Zaüé日\nb <B2>\n"))
              (should-not quire-test--refused))
          (jsonrpc-shutdown other))))))

(ert-deftest quire-test-undo-and-redo-go-through-the-daemon ()
  "In a shared buffer `undo' (C-/, C-_, C-x u) and `undo-redo' ask the daemon
\(`document/undo', `document/redo'), which reverts only this editor's own
steps, one per command: two things typed as two commands, another editor
typing in between and inside the second, undone twice: only this editor's
two insertions are gone, the other's text stays; redo brings back one.
Emacs's own undo list records nothing meanwhile, and is back after unsharing."
  (quire-test--with-own-daemon ".daemon-undo"
    (let ((uri "daemon-undo.el.txt") (groups nil))
      (buffer-enable-undo)
      (insert "start f(x)\n<END>\n")
      (quire-share uri)
      (should (eq buffer-undo-list t))
      (dolist (key (list (kbd "C-/") (kbd "C-_") (kbd "C-x u")))
        (should (eq (key-binding key) 'quire-undo)))
      (should (eq (key-binding (where-is-internal 'undo-redo global-map t)) 'quire-redo))
      (let ((other (quire-test--editor socket uri)))
        (unwind-protect
            (progn
              (should (quire-test--agree other uri))
              (goto-char (point-min))
              (end-of-line)
              (cl-letf* ((send (symbol-function 'jsonrpc-async-request))
                         ((symbol-function 'jsonrpc-async-request)
                          (lambda (connection method params &rest rest)
                            (when (eq method :document/edit) (push (plist-get params :undoGroup) groups))
                            (apply send connection method params rest))))
                (quire-test--keys " <E1>")                     ; one command after another: one step
                (should (quire-test--agree other uri))
                (quire-test--remote-insert other uri "\n<END>" " <P1>")
                (should (quire-test--wait (lambda () (string-match-p "<E1> <P1>\n" (quire--text)))))
                (quire-test--keys (kbd "C-e"))                 ; a command between: a new step
                (quire-test--keys " <E2>"))
              ;; Five keys each time, one group each time, the two groups different.
              (should (= (length groups) 10))
              (should (= (length (delete-dups (copy-sequence (seq-take groups 5)))) 1))
              (should (= (length (delete-dups (copy-sequence (seq-drop groups 5)))) 1))
              (should-not (equal (car groups) (car (last groups))))
              (should (integerp (car groups)))
              (should (quire-test--agree other uri))
              ;; The other types inside the second insertion.
              (quire-test--remote-insert other uri "2>" "<P2>")
              (should (quire-test--wait (lambda () (string-match-p "<E<P2>2>" (quire--text)))))
              (quire-test--keys (kbd "C-/"))
              (should (quire-test--wait (lambda () (equal (quire--text) "start f(x) <E1> <P1><P2>\n<END>\n"))))
              (quire-test--keys (kbd "C-x u"))
              (should (quire-test--wait (lambda () (equal (quire--text) "start f(x) <P1><P2>\n<END>\n"))))
              (should (quire-test--agree other uri))
              (should (eq buffer-undo-list t))
              (quire-test--keys (where-is-internal 'undo-redo global-map t))
              (should (quire-test--wait (lambda () (equal (quire--text) "start f(x) <E1> <P1><P2>\n<END>\n"))))
              (should (quire-test--agree other uri))
              ;; Nothing more of this editor's to redo: said, and nothing changes.
              (should (= (quire-redo 1) 1))
              (should (quire-test--wait (lambda () (string-match-p "<E<P2>2>" (quire--text)))))
              (should (= (quire-redo 1) 0))
              (should (quire-test--agree other uri)))
          (jsonrpc-shutdown other)))
      (quire-mode -1)
      (should (listp buffer-undo-list))
      (should (eq (key-binding (kbd "C-/")) 'undo)))))

(defun quire-test--yank-then-undo (lines at)
  "Yank LINES lines, another editor types inside them at line AT, undo the yank.
The other's text stays, for everyone."
  (quire-test--with-own-daemon (format ".undo%d" lines)
    (let ((uri "undo.el.txt"))
      (buffer-enable-undo)
      (insert "top f(x)\n<END>\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri)))
        (unwind-protect
            (progn
              (should (quire-test--agree other uri))
              (kill-new (mapconcat (lambda (i) (format "line %03d <Y%d> \"s\" f(%d)\n" i i i)) (number-sequence 1 lines) ""))
              (goto-char (point-min))
              (forward-line 1)
              (undo-boundary)
              (yank)
              (undo-boundary)
              (should (quire-test--agree other uri))
              (quire-test--remote-insert other uri (format "<Y%d>" at) "<R9> ")
              (should (quire-test--wait (lambda () (string-match-p "<R9> <Y" (quire--text)))))
              ;; Also right at the start of the yank, which moves with it.
              (quire-test--remote-insert other uri "line 001" "<S8>")
              (should (quire-test--wait (lambda () (string-match-p "<S8>line 001" (quire--text)))))
              (quire-test--keys (kbd "C-/"))   ; `quire-undo': the daemon's undo
              (should (quire-test--wait (lambda () (equal (quire--text) "top f(x)\n<S8><R9> <END>\n"))))
              (should (quire-test--agree other uri)))
          (jsonrpc-shutdown other))))))

(ert-deftest quire-test-undo-of-a-yank-keeps-what-others-typed-inside ()
  "Undo of a 3-line and a 300-line yank with another's insertions inside it."
  (quire-test--yank-then-undo 3 2)
  (quire-test--yank-then-undo 300 150))

(ert-deftest quire-test-revert-keeps-sharing-and-merges-the-file-once ()
  "`revert-buffer' after an outside change while others type: sharing goes on,
the outside change arrives once, what others typed stays, and file-local
variables someone typed are not applied.  `normal-mode' and
`find-alternate-file' of the same file keep sharing too."
  (quire-test--with-own-daemon ".revert"
    (let* ((uri "revert.el.txt")
           (path (make-temp-file "quire-revert-" nil ".txt" "alpha <A1>\nbeta f(x)\ngamma \"s\"\n")))
      (unwind-protect
          (with-current-buffer (find-file-noselect path)
            (quire-share uri)
            (let ((other (quire-test--editor socket uri)))
              (unwind-protect
                  (progn
                    (should (quire-test--agree other uri))
                    ;; Typed by the other person, not saved: it is not in the file.
                    (quire-test--remote-insert other uri "alpha" "-*- fill-column: 7 -*- ")
                    (should (quire-test--wait (lambda () (string-prefix-p "-*- fill" (quire--text)))))
                    ;; Changed outside Quire, as sed would.
                    (with-temp-file path (insert "alpha <A1>\nbeta g(y)\ngamma \"s\"\n"))
                    ;; A word on its way while the buffer reverts.
                    (quire-test--remote-insert other uri "gamma" "<P7> " t)
                    (revert-buffer t t)
                    (should quire-mode)
                    (should (quire-test--wait
                             (lambda () (equal (quire--text) "-*- fill-column: 7 -*- alpha <A1>\nbeta g(y)\n<P7> gamma \"s\"\n"))))
                    (should (quire-test--agree other uri))
                    (should-not (eql fill-column 7))
                    (should (buffer-modified-p))   ; the other's words are not in the file
                    ;; Still shared: typing goes on reaching the daemon.
                    (goto-char (point-max))
                    (insert "after <V1>\n")
                    (should (quire-test--agree other uri))
                    (normal-mode)
                    (should quire-mode)
                    (insert "after normal-mode\n")
                    (should (quire-test--agree other uri))
                    ;; Saved, then read again into a new buffer: that buffer is shared.
                    (save-buffer)
                    (let ((text (quire--text))) (with-temp-file path (insert text "outside again\n")))
                    (find-alternate-file path)
                    (should quire-mode)
                    (should (equal (plist-get quire--state :uri) uri))
                    (should (quire-test--wait (lambda () (string-suffix-p "after normal-mode\noutside again\n" (quire--text)))))
                    (should (quire-test--agree other uri))
                    (goto-char (point-min))
                    (insert "<W2>")
                    (should (quire-test--agree other uri))
                    (should (equal (quire-test--text-of other uri)
                                   (concat "<W2>-*- fill-column: 7 -*- alpha <A1>\nbeta g(y)\n<P7> gamma \"s\"\n"
                                           "after <V1>\nafter normal-mode\noutside again\n"))))
                (jsonrpc-shutdown other)))
            (quire-stop)
            (set-buffer-modified-p nil)
            (kill-buffer))
        (delete-file path)))))

(ert-deftest quire-test-killing-a-shared-buffer-closes-its-document ()
  "A killed shared buffer's document is closed, so it can be opened again."
  (quire-test--with-own-daemon ".kill"
    (let ((editors (lambda ()
                     (let ((probe (quire-test--probe socket)))
                       (prog1 (plist-get (seq-find (lambda (d) (equal (plist-get d :uri) "killed.el.txt"))
                                                   (jsonrpc-request probe :document/list (make-hash-table)))
                                         :editors)
                         (jsonrpc-shutdown probe))))))
      (let ((buffer (generate-new-buffer "killed")))
        (with-current-buffer buffer
          (insert "<K1> f(x)\n")
          (quire-share "killed.el.txt"))
        (should (equal (funcall editors) 1))
        (kill-buffer buffer)
        (should (quire-test--wait (lambda () (equal (funcall editors) 0))))
        (quire-open "killed.el.txt")
        (should (equal (buffer-string) "<K1> f(x)\n"))
        (kill-buffer)))))

(ert-deftest quire-test-change-records-that-do-not-add-up-are-not-sent-as-ranges ()
  "The old range comes from the before-change text cut to the after-change
range, across line breaks; records that do not match the buffer give nil
(the whole text is sent then)."
  (with-temp-buffer
    (insert "x <A1>\nf(x) \"s\"\nend")
    (let ((quire--state '(:uri "u")))
      ;; The announced region is lines 1-2; the change replaces ">\nf(" with "|".
      (quire--before-change 3 13)
      (let ((inhibit-modification-hooks t)) (delete-region 6 10) (goto-char 6) (insert "|"))
      (should (equal (quire--exact-change 6 7 4)
                     '(:range (:start (:line 0 :character 5) :end (:line 1 :character 2)) :text "|")))
      ;; Moved on: a second change reported after the same announcement.
      (let ((inhibit-modification-hooks t)) (goto-char 3) (delete-char 1) (insert "B"))
      (should (equal (quire--exact-change 3 4 1)
                     '(:range (:start (:line 0 :character 2) :end (:line 0 :character 3)) :text "B")))
      ;; The buffer around the change is not what was announced: no range.
      (setq quire--before (list 1 5 "x <Z"))
      (should-not (quire--exact-change 3 4 1))
      ;; The old range is not inside the announced region: no range.
      (setq quire--before (list 3 4 "B"))
      (should-not (quire--exact-change 3 5 2))
      (setq quire--before nil)
      (should-not (quire--exact-change 3 4 1)))))

(defun quire-test--where ()
  "Where the selected window is: \"FILE:LINE:COLUMN\" (line from 1)."
  (with-current-buffer (window-buffer (selected-window))
    (save-excursion
      (goto-char (window-point (selected-window)))
      (format "%s:%d:%d" (file-name-nondirectory (or buffer-file-name (buffer-name)))
              (line-number-at-pos) (current-column)))))

(ert-deftest quire-test-who-jump-and-follow ()
  "Who is here, jump and follow (`quire/who') against a partner editor on the
same daemon (otto): `quire-who' lists him with his file and line,
`quire-jump' goes to his cursor (visiting his file by path), `quire-follow'
moves this window as his cursor moves, to another line and to another file,
and stops when this Emacs moves."
  (let* ((binary (getenv "QUIRE_BINARY")) (socket (getenv "QUIRE_TEST_SOCKET"))
         (quire-command (list binary "attach" socket))
         (quire-user-name "emma")
         (dir (file-name-as-directory (file-truename (make-temp-file "quire-who" t))))
         (default-directory dir)
         (otto nil))
    (make-directory (concat dir ".git"))   ; the project root: files are named from here
    (pcase-dolist (`(,file . ,text) '(("a.txt" . "a one\na two\na three\na four\n")
                                      ("b.txt" . "b one\nb two\nb three\n")
                                      ("c.txt" . "c one\nc two\nc three\nc four\nc five\n")))
      (write-region text nil (concat dir file)))
    (cl-flet ((otto-at (uri line character)
                (let ((position (list :line line :character character)))
                  (jsonrpc-notify otto :cursor/update
                                  (list :uri uri :epoch 0 :revision 0
                                        :selections (vector (list :start position :end position)))))))
      (unwind-protect
          (progn
            (find-file (concat dir "a.txt"))
            (quire-share)
            (should (equal (plist-get quire--state :uri) "a.txt"))
            (goto-char (point-min))
            (forward-line 1)
            (forward-char 2)
            (quire--send-cursor)
            ;; Otto, under a name no other test's editor left on this daemon has.
            (setq otto (jsonrpc-process-connection
                        :name (quire-test--unique-name "otto") :notification-dispatcher #'ignore :request-dispatcher #'ignore
                        :process (make-process :name "otto" :command (list binary "attach" socket)
                                               :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t)))
            (jsonrpc-request otto :initialize '(:user (:name "otto-who") :capabilities (:general (:positionEncodings ["utf-32"]))))
            (jsonrpc-request otto :document/open '(:uri "a.txt" :text ""))
            (dolist (file '("b.txt" "c.txt"))
              (should (equal (plist-get (jsonrpc-request otto :document/open
                                                         (list :file (concat dir file)
                                                               :text (with-temp-buffer (insert-file-contents (concat dir file))
                                                                                       (buffer-string))))
                                        :uri)
                             file)))
            ;; Who: otto on line 4 of a.txt, emma (you) on line 2.
            (otto-at "a.txt" 3 2)
            ;; (Editors of earlier tests may still be listed: this daemon serves every test.)
            (should (quire-test--wait (lambda () (string-match-p "^Quire: here: emma (you) a\\.txt:2, .*otto-who a\\.txt:4"
                                                                 (quire-who)))))
            ;; Jump: to his cursor in a.txt, then, once he is in b.txt, which this Emacs does not
            ;; visit, to b.txt.
            (quire-jump "otto-who")
            (should (equal (quire-test--where) "a.txt:4:2"))
            (otto-at "b.txt" 2 4)
            (should (quire-test--wait (lambda () (string-match-p "otto-who b\\.txt:3" (quire-who)))))
            (quire-jump "otto-who")
            (should (equal (quire-test--where) "b.txt:3:4"))
            (should (equal (plist-get quire--state :uri) "b.txt"))
            (should (equal (buffer-string) "b one\nb two\nb three\n"))
            ;; Follow: from a.txt, this window goes to him in b.txt, follows him to another
            ;; line, back to a.txt (by his cursor notification), and into c.txt, not visited here.
            (switch-to-buffer (find-buffer-visiting (concat dir "a.txt")))
            (goto-char (point-min))
            (quire-follow "otto-who")
            (should (equal quire--following "otto-who"))
            (should (equal (quire-test--where) "b.txt:3:4"))
            (otto-at "b.txt" 0 1)
            (should (quire-test--wait (lambda () (equal (quire-test--where) "b.txt:1:1"))))
            (otto-at "a.txt" 2 0)
            (should (quire-test--wait (lambda () (equal (quire-test--where) "a.txt:3:0"))))
            (otto-at "c.txt" 4 3)
            (should (quire-test--wait (lambda () (equal (quire-test--where) "c.txt:5:3"))))
            (should (equal (plist-get (buffer-local-value 'quire--state (window-buffer (selected-window))) :uri) "c.txt"))
            (should (equal quire--following "otto-who"))
            ;; Emma moves: the follow ends and says so; otto's next move leaves her where she is.
            (set-window-point (selected-window) (with-current-buffer (window-buffer (selected-window)) (point-min)))
            (should (quire-test--wait (lambda () (null quire--following))))
            (should (quire-test--said "stopped following otto-who (you moved)"))
            (otto-at "c.txt" 2 0)
            (should (quire-test--wait
                     (lambda () (with-current-buffer (window-buffer (selected-window))
                                  (seq-find (lambda (o) (string-match-p "otto-who" (or (overlay-get o 'after-string) "")))
                                            (overlays-in (point-min) (point-max)))))))
            (should (equal (quire-test--where) "c.txt:1:0"))
            ;; Roles: otto shares a project folder (as `quire share' does) and moves into one
            ;; of its files: `quire-who' shows his role there (this daemon shares it: owner);
            ;; emma, in a document shared by name (no project), has none.
            (let* ((proj (concat dir "proj/"))
                   (shared (progn (make-directory proj)
                                  (write-region "d one\nd two\n" nil (concat proj "d.txt"))
                                  (jsonrpc-request otto :project/share (list :root (directory-file-name proj) :listen ["127.0.0.1:0"]))))
                   (uri (plist-get (jsonrpc-request otto :document/open (list :file (concat proj "d.txt") :ifShared t
                                                                              :text "d one\nd two\n"))
                                   :uri)))
              (should (string-prefix-p "@" uri))
              (otto-at uri 1 0)
              (should (quire-test--wait (lambda () (string-match-p "otto-who (owner) proj/d\\.txt:2 (\\+3 files)" (quire-who)))))
              (should (string-match-p "emma (you) " (quire-who)))
              (jsonrpc-request otto :project/stop (list :key (plist-get shared :key)))))
        (quire-stop)
        (when otto (ignore-errors (jsonrpc-shutdown otto)))
        (dolist (file '("a.txt" "b.txt" "c.txt"))
          (when-let ((buffer (find-buffer-visiting (concat dir file))))
            (with-current-buffer buffer (set-buffer-modified-p nil) (kill-buffer))))
        (delete-directory dir t)))))

(ert-deftest quire-test-opening-a-project-file-joins-its-document ()
  "Once a project is shared on the daemon running for this user (`project/share',
as `quire share' asks it), visiting one of its files starts this Emacs's
`quire', which attaches to that daemon, and joins its document with no
command; a file created in it too; a file outside it stays unshared.
The daemon is this test's own, started as an editor starts one (plain
`quire', its stdio the host editor's) in a data directory of its own: it
listens for more editors at the data directory's editor socket."
  (let* ((binary (getenv "QUIRE_BINARY"))
         (data (file-truename (make-temp-file "quire-data" t)))
         (process-environment (cons (concat "XDG_DATA_HOME=" data) process-environment))
         (quire-command (list binary))
         (quire--stopping nil)   ; as in an Emacs where no one ran `quire-stop'
         (dir (file-name-as-directory (file-truename (make-temp-file "quire-project" t))))
         (outside (file-truename (make-temp-file "quire-outside" nil ".txt" "not shared\n")))
         (host-process (make-process :name "host" :command (list binary) :connection-type 'pipe
                                     :coding 'utf-8-emacs-unix :noquery t))
         (host (jsonrpc-process-connection :name (quire-test--unique-name "host") :process host-process
                                           :notification-dispatcher #'ignore :request-dispatcher #'ignore))
         (key nil))
    (make-directory (concat dir "src"))
    (write-region "def greet():\n    return \"hi\"\n" nil (concat dir "src/greet.py"))
    (unwind-protect
        (progn
          ;; The host, the daemon's first editor, shares the folder and opens greet.py.
          (jsonrpc-request host :initialize '(:user (:name "hana") :capabilities (:general (:positionEncodings ["utf-32"]))))
          (setq key (plist-get (jsonrpc-request host :project/share (list :root dir :listen ["127.0.0.1:0"])) :key))
          (should (stringp key))
          (let ((uri (plist-get (jsonrpc-request host :document/open
                                                 (list :file (concat dir "src/greet.py") :ifShared t
                                                       :text "def greet():\n    return \"hi\"\n"))
                                :uri)))
            (should (string-prefix-p "@" uri))
            ;; This Emacs, with no daemon of its own, visits the file: it finds the running
            ;; daemon's editor socket, starts `quire' (which attaches to it) and joins.
            (should (quire-test--wait #'quire--daemon-running-p))
            (should-not quire--connection)
            (find-file (concat dir "src/greet.py"))
            (should quire-mode)
            (should (equal (plist-get quire--state :uri) uri))
            (jsonrpc-request host :document/edit
                             (list :uri uri :epoch 0 :revision 0
                                   :changes (vector (list :range '(:start (:line 1 :character 11) :end (:line 1 :character 15))
                                                          :text "\"hello\""))))
            (should (quire-test--wait (lambda () (equal (buffer-string) "def greet():\n    return \"hello\"\n")))))
          ;; A file created in the project: a new file of it, joined too.
          (find-file (concat dir "src/new.py"))
          (should quire-mode)
          (should (string-prefix-p "@" (plist-get quire--state :uri)))
          ;; A file outside the project: left alone.
          (find-file outside)
          (should-not quire-mode)
          (should-not (seq-find (lambda (document) (string-match-p "outside" (plist-get document :uri)))
                                (jsonrpc-request host :document/list (make-hash-table)))))
      (quire-stop)
      (when key (ignore-errors (jsonrpc-request host :project/stop (list :key key))))
      ;; jsonrpc says "Server exited with status 0" of the host: not in *Messages*, where
      ;; another test looks for what the client itself says of its daemon.
      (let ((message-log-max nil) (inhibit-message t))
        (ignore-errors (jsonrpc-request host :shutdown (make-hash-table)))
        (ignore-errors (jsonrpc-notify host :exit (make-hash-table)))
        (quire-test--wait (lambda () (not (process-live-p host-process))))
        (ignore-errors (jsonrpc-shutdown host)))
      (dolist (file (list (concat dir "src/greet.py") (concat dir "src/new.py") outside))
        (when-let ((buffer (find-buffer-visiting file)))
          (with-current-buffer buffer (set-buffer-modified-p nil) (kill-buffer))))
      (delete-directory data t)
      (delete-directory dir t)
      (delete-file outside))))

;; Read-only documents (protocol/decisions/roles.md), against a stand-in daemon that opens every
;; document read-only (editors/test/readonly_daemon.py).
(ert-deftest quire-test-a-read-only-document-cannot-change-and-says-why-once ()
  (let* ((dir (make-temp-file "quire-readonly" t))
         (control (expand-file-name "control" dir)) (received (expand-file-name "received" dir))
         (process-environment (append (list (concat "QUIRE_FAKE_CONTROL=" control) (concat "QUIRE_FAKE_LOG=" received))
                                      process-environment))
         (quire-command (list "python3" (expand-file-name "../../test/readonly_daemon.py" quire-test--directory)))
         (reason "you can read notes but not change it (role read)")
         (said '())
         (record (lambda (format &rest arguments) (when format (push (apply #'format-message format arguments) said))))
         (told (lambda () (seq-count (lambda (line) (string-match-p (regexp-quote (concat "Quire: " reason)) line)) said)))
         (send (lambda (message)
                 (with-temp-buffer
                   (insert (json-serialize (append '(:jsonrpc "2.0") message)) "\n")
                   (append-to-file (point-min) (point-max) control))))
         (received-count (lambda (method)
                           (if (file-exists-p received)
                               (with-temp-buffer
                                 (insert-file-contents received)
                                 (how-many (regexp-quote (format "\"method\": \"%s\"" method)) (point-min) (point-max)))
                             0)))
         ;; What the command loop does when a command signals: its error function shows it (the
         ;; default one, which ends a batch Emacs, left out).
         (type (lambda (keys)
                 (condition-case failure (insert keys)
                   (buffer-read-only (message "%s" (error-message-string failure))
                                     (quire--command-error failure "" nil))))))
    (quire-stop)
    (setq quire--stopping nil)
    (advice-add 'message :before record '((name . quire-test-record)))
    (unwind-protect
        (with-temp-buffer
          (insert "hello world\n")
          (quire-share "notes")
          (should (quire-test--wait (lambda () quire--read-only)))
          (should buffer-read-only)
          (should (string-match-p "read-only" (quire--lighter)))
          (should (advice-function-member-p #'quire--command-error command-error-function))
          (should (= (funcall told) 0))
          ;; Typing: Emacs refuses; the client says why once, however often it is tried.
          (dotimes (_ 3) (funcall type "typed"))
          (should (equal (buffer-string) "hello world\n"))
          (should (= (funcall told) 1))
          (should (= (funcall received-count "document/edit") 0))
          ;; The daemon's edits still go in (following a writer).
          (funcall send '(:method "document/edit"
                          :params (:uri "notes" :epoch 1 :revision 0
                                   :changes [(:range (:start (:line 0 :character 0) :end (:line 0 :character 0)) :text "W ")])))
          (should (quire-test--wait (lambda () (equal (buffer-string) "W hello world\n"))))
          (should buffer-read-only)
          ;; The role changes to write: writable; back to read: read-only again.
          (funcall send '(:method "document/readOnly"
                          :params (:uri "notes" :readOnly :false :reason "you can change notes again (role write)")))
          (should (quire-test--wait (lambda () (not buffer-read-only))))
          (should-not (string-match-p "read-only" (quire--lighter)))
          (funcall send `(:method "document/readOnly" :params (:uri "notes" :readOnly t :reason ,reason)))
          (should (quire-test--wait (lambda () buffer-read-only)))
          ;; Typed while the role still allowed it, refused by the daemon: one message, the shared text back.
          (funcall send '(:method "document/readOnly"
                          :params (:uri "notes" :readOnly :false :reason "you can change notes again (role write)")))
          (should (quire-test--wait (lambda () (not buffer-read-only))))
          (let ((before (funcall told)))
            (goto-char (point-max))
            (insert "raced")
            (insert "again")
            (should (quire-test--wait (lambda () (and (>= (funcall received-count "document/resync") 1)
                                                      (equal (buffer-string) "hello world\n")))))
            (should buffer-read-only)
            (should (= (funcall told) (1+ before))))
          (quire-stop)
          (should-not buffer-read-only))
      (advice-remove 'message 'quire-test-record)
      (quire-stop)
      (setq quire--stopping nil))))

(defun quire-test--daemon (name binary &rest arguments)
  "A daemon of a test's own named NAME, started as an editor starts one
\(BINARY with ARGUMENTS, its stdio ours), initialized."
  (let ((connection (jsonrpc-process-connection
                     :name (quire-test--unique-name name)
                     :process (make-process :name name :command (cons binary arguments) :connection-type 'pipe
                                            :coding 'utf-8-emacs-unix :noquery t)
                     :notification-dispatcher #'ignore :request-dispatcher #'ignore)))
    (jsonrpc-request connection :initialize '(:user (:name "hana") :capabilities (:general (:positionEncodings ["utf-32"]))))
    connection))

(defun quire-test--end-daemon (connection)
  "Shut down and end the test's daemon CONNECTION, quietly."
  (let ((message-log-max nil) (inhibit-message t))
    (ignore-errors (jsonrpc-request connection :shutdown (make-hash-table)))
    (ignore-errors (jsonrpc-notify connection :exit (make-hash-table)))
    (quire-test--wait (lambda () (not (process-live-p (jsonrpc--process connection)))))
    (ignore-errors (jsonrpc-shutdown connection))))

(ert-deftest quire-test-a-kept-port-found-taken-is-shown ()
  "A port kept across restarts found taken: the daemon this Emacs starts (on a
data directory where a project was shared before) listens on another port and
says so (window/showMessage, the `notices' of
protocol/decisions/project-sharing.md, \"The port across restarts\"); the
client shows it."
  (let* ((binary (getenv "QUIRE_BINARY"))
         (data (file-truename (make-temp-file "quire-data" t)))
         (holder-data (file-truename (make-temp-file "quire-holder-data" t)))
         (process-environment (cons (concat "XDG_DATA_HOME=" data) process-environment))
         (quire-command (list binary))
         (quire--stopping nil)
         (dir (file-truename (make-temp-file "quire-project" t)))
         (other (file-truename (make-temp-file "quire-other" t)))
         (first nil) (holder nil) (address nil))
    (write-region "notes\n" nil (concat dir "/notes.md"))
    (write-region "other\n" nil (concat other "/other.md"))
    (unwind-protect
        (progn
          ;; The folder is shared once on a port the system picks; the project keeps it.
          (setq first (quire-test--daemon "first" binary))
          (setq address (seq-find (lambda (a) (string-prefix-p "127.0.0.1:" a))
                                  (plist-get (jsonrpc-request first :project/share (list :root dir :listen ["127.0.0.1:0"])) :addresses)))
          (should (stringp address))
          (quire-test--end-daemon first)
          ;; Another program takes that port meanwhile (a daemon of its own, sharing another folder there).
          (setq holder (quire-test--daemon "holder" binary "--data-dir" holder-data))
          (should (plist-get (jsonrpc-request holder :project/share (list :root other :listen (vector address))) :key))
          ;; This Emacs starts its daemon on the first data directory by sharing a buffer.
          (with-current-buffer (get-buffer-create "*quire-notice*")
            (insert "hello\n")
            (quire-share "scratch")
            (should (quire-test--wait (lambda () (quire-test--said (concat "Quire: The port this project used before, "
                                                                           (regexp-quote address) ", is taken")))))
            (should (quire-test--said "partners need the new line"))))
      (quire-stop)
      (when-let ((buffer (get-buffer "*quire-notice*"))) (with-current-buffer buffer (set-buffer-modified-p nil) (kill-buffer)))
      (when holder (quire-test--end-daemon holder))
      (delete-directory data t)
      (delete-directory holder-data t)
      (delete-directory dir t)
      (delete-directory other t)
      (setq quire--stopping nil))))

(provide 'quire-test)

;;; quire-test.el ends here
