;;; quire.el --- Collaborative editing with the Quire daemon  -*- lexical-binding: t; -*-

;; Version: 0.1
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, convenience

;;; Commentary:

;; Shares buffers with the `quire' daemon (see protocol/README.md in the Quire repository):
;; local changes go to the daemon as ranged edits with revisions, the daemon's edits are
;; applied by the revision rule without being sent back, and other people's cursors show as
;; overlays.  `M-x quire-share' starts it.

;;; Code:

(require 'jsonrpc)
(require 'subr-x)
(require 'seq)
(require 'cl-lib)

(defgroup quire nil
  "Collaborative editing with the Quire daemon."
  :group 'tools
  :prefix "quire-")

(defcustom quire-command '("quire")
  "The daemon to start, as a list.
Use (\"quire\" \"attach\" PATH) to join a daemon started with --socket PATH."
  :type '(repeat string))

(defcustom quire-user-name nil
  "Your name, shown to others.
Nil: the daemon names you (git's user.name, else $USER, else your login)."
  :type '(choice (const :tag "As the daemon finds it" nil) string))

(defvar quire--user-name nil
  "The name others are shown for you, as the daemon's `initialize' reply says.")

(defcustom quire-color "#005fd7"
  "Your cursor colour for others."
  :type 'string)

(defcustom quire-secret-file nil
  "A file holding the secret shared with peers, passed as --secret-file.
Or set QUIRE_SECRET in the environment."
  :type '(choice (const nil) file))

(defface quire-cursor-face '((t :inverse-video t))
  "Face of other people's cursors.")

(defface quire-selection-face '((t :inherit region))
  "Face of other people's selections.")

(defface quire-name-face '((t :inherit shadow :slant italic))
  "Face of other people's names next to their cursors.")


(defvar quire--connection nil "The jsonrpc connection to the daemon, or nil.")

(defvar-local quire--state nil
  "Plist of a shared buffer: :uri :epoch :editor :daemon :file :view.
:editor counts the edits sent in the epoch, :daemon the daemon edits
applied (the revision the next edit is based on).  :view names the
daemon's durable record of what this buffer was sent and did, from the
reply to `document/open'; a reopen after the daemon went away sends it.")

(defun quire--opened-state (uri reply file)
  "The state of a buffer sharing URI (bound to FILE) after the open REPLY."
  (list :uri uri :epoch (plist-get reply :epoch) :editor 0 :daemon 0 :file file :view (plist-get reply :view)))

(defun quire--resynced-state (epoch)
  "The state after a resync that started EPOCH: the same document and view."
  (list :uri (plist-get quire--state :uri) :epoch epoch :editor 0 :daemon 0
        :file (plist-get quire--state :file) :view (plist-get quire--state :view)))

(defvar-local quire--before nil
  "The region about to change and its text, as (START END TEXT).
Set by `before-change-functions', moved on by each change reported in it.")

(defvar-local quire--cursors nil
  "Overlays of other people's cursors, by session id.")

(defvar quire--applying nil "Non-nil while applying the daemon's edits.")

(defvar quire--stopping nil "Non-nil once `quire-stop' ran: no reconnecting.")

(defvar quire--reconnect-delay 0.25 "Seconds before the next reconnection attempt.")

(defvar quire--reconnect-timer nil "The pending reconnection, if any.")

(defvar quire--instance (format "emacs-%x-%x-%x" (emacs-pid) (truncate (float-time)) (random most-positive-fixnum))
  "Names this Emacs's edits (`editId'), unique for this editor.")

(defvar quire--edit-count 0 "Edits sent by this Emacs, for their `editId'.")

(defvar quire--undo-group nil
  "The `undoGroup' of the edits of the command running, or nil outside commands.")

;;; Positions: zero-based lines, characters in code points (utf-32).

(defun quire--position (pos)
  "The protocol position of buffer position POS."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      (list :line (1- (line-number-at-pos pos t)) :character (- pos (line-beginning-position))))))

(defun quire--point (position &optional from)
  "The buffer position of protocol POSITION, or nil when it is past the end.
FROM, a cons (LINE . BOL), starts the line search at a known line start
at or before POSITION's line instead of at the start of the buffer."
  (save-excursion
    (let ((line (plist-get position :line)) (character (plist-get position :character)))
      (if (and from (<= (car from) line))
          (progn (goto-char (cdr from)) (setq line (- line (car from))))
        (goto-char (point-min)))
      (when (and (zerop (forward-line line))
                 (<= character (- (line-end-position) (point))))
        (+ (point) character)))))

(defun quire--text ()
  "The buffer's whole text, as the daemon holds it."
  (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))

(defun quire--hash ()
  "SHA-256 of the buffer's text in UTF-8."
  (secure-hash 'sha256 (encode-coding-string (quire--text) 'utf-8-unix)))

;;; The connection

(defvar quire--links-up nil "How many links to other daemons are up, as the daemon last said.")
(defvar quire--listen-port nil "The port `quire-listen' got, asked for again after a daemon restart.")

(defun quire--connect ()
  "Start the daemon and initialize, unless already done."
  (unless (and quire--connection (jsonrpc-running-p quire--connection))
    (let* ((command (if (and quire-secret-file (not (member "attach" quire-command)))
                        (append quire-command (list "--secret-file" (expand-file-name quire-secret-file)))
                      quire-command))
           (process (make-process :name "quire" :command command :connection-type 'pipe
                                  :coding 'utf-8-emacs-unix :noquery t
                                  :stderr (get-buffer-create " *quire-stderr*")))
           (connection (jsonrpc-process-connection
                        :name "quire" :process process
                        :notification-dispatcher #'quire--on-notification
                        :request-dispatcher (lambda (&rest _) nil)
                        ;; Only the current connection's end matters: one dropped on purpose does not.
                        :on-shutdown (lambda (ended) (when (eq ended quire--connection) (quire--schedule-reconnect))))))
      ;; The daemon ending (a restart, a crash) is handled by reconnecting, quietly.
      (add-function :around (process-sentinel process) #'quire--quiet-sentinel)
      (setq quire--connection connection)
      (let ((reply (quire--request :initialize
                                   (list :protocolVersion 1
                                         :clientInfo '(:name "quire.el" :version "0.1")
                                         ;; No name configured: the daemon names the person.
                                         :user (append (and quire-user-name (list :name quire-user-name))
                                                       (list :color quire-color))
                                         :capabilities '(:general (:positionEncodings ["utf-32"]))))))
        (unless (equal (plist-get (plist-get reply :capabilities) :positionEncoding) "utf-32")
          (error "Quire: the daemon did not agree to code point positions"))
        (setq quire--user-name (or (plist-get (plist-get reply :user) :name) quire-user-name))
        (jsonrpc-notify connection :initialized (make-hash-table))
        ;; Links already up (another editor's, or ones that came back before we did).
        (setq quire--links-up
              (plist-get (plist-get (quire--request :quire/status (make-hash-table)) :summary) :linksUp))
        ;; A restarted daemon listens again where `quire-listen' asked it to.
        (when quire--listen-port
          (condition-case failure
              (quire--request :peer/listen (list :port quire--listen-port))
            (jsonrpc-error (message "Quire: cannot listen on port %s again: %s" quire--listen-port
                                    (alist-get 'jsonrpc-error-message (cddr failure))))))))))

(defun quire--quiet-sentinel (sentinel process change)
  "Run jsonrpc's SENTINEL on PROCESS and CHANGE without its message.
It says \"[jsonrpc] Server exited with status 1\" in the echo area when the
daemon ends; the mode line shows it instead, until the reconnection."
  (let ((inhibit-message t) (message-log-max nil))
    (funcall sentinel process change))
  (force-mode-line-update t))

(defvar quire--in-filter nil "Non-nil while handling a daemon notification (inside the process filter).")

(defconst quire--request-timeout 10 "Seconds a request waits for its reply.")

(defun quire--request (method params &optional then)
  "Send METHOD with PARAMS to the daemon, wait for the reply, return its result.
An error reply signals `jsonrpc-error', as `jsonrpc-request' does.  Unlike
`jsonrpc-request', the wait is safe wherever this is called from:

- It reads the daemon's output only, and runs no timer and no other
  process's filter meanwhile (`accept-process-output' with JUST-THIS-ONE an
  integer).  `jsonrpc-request' waits by reading every process and running
  timers, and its reply ends the wait by a `throw'.  So when a timer of
  ours (a hash check's resync) ran inside another package's blocking
  request and that package's reply came first, its `throw' unwound through
  our wait, which removed our request's continuation: the daemon had
  resynced, and its reply (the new epoch and text) was dropped.  Here the
  other reply simply waits until ours is read, and nothing of another
  package's runs inside ours.
- It never waits inside the daemon's own process filter (a notification
  being handled): reading the daemon's output there would run the filter
  inside itself and garble what it is parsing.  That is a bug of the
  caller, which must defer such work to a timer; it signals an error.
- THEN, when given, is called with the result where the reply stands among
  the daemon's messages: before any message that follows it is handled (a
  daemon edit sent after a reply that starts an epoch finds that epoch
  set), and even when the reply comes after the wait was left (a quit, or
  no reply within `quire--request-timeout'): the daemon did act on the
  request, so what its reply starts is not lost.  It runs inside the
  daemon's process filter, so it sends no request."
  (when quire--in-filter
    (error "Quire: %s requested from inside the daemon's process filter" method))
  ;; What was changed goes before anything asked about it.
  (quire--flush-all)
  (let* ((connection quire--connection)
         (process (jsonrpc--process connection))
         (reply (list 'waiting))
         (finish (lambda (kind value)
                   (when (eq (car reply) 'waiting) (setcar reply kind))
                   (setcdr reply value)
                   (when (and then (eq kind 'done))
                     (let ((quire--in-filter t)) (funcall then value)))))
         (deadline (+ (float-time) quire--request-timeout)))
    (jsonrpc-async-request
     connection method params
     :success-fn (lambda (result) (funcall finish 'done result))
     :error-fn (lambda (error)
                 (funcall finish 'error `((jsonrpc-error-code . ,(plist-get error :code))
                                          (jsonrpc-error-message . ,(plist-get error :message))
                                          (jsonrpc-error-data . ,(plist-get error :data)))))
     :timeout nil)
    (unwind-protect
        (while (and (eq (car reply) 'waiting) (process-live-p process) (< (float-time) deadline))
          (accept-process-output process 0.05 nil 1))
      (when (eq (car reply) 'waiting) (setcar reply 'abandoned)))
    (pcase (car reply)
      ('done (cdr reply))
      ('error (signal 'jsonrpc-error (cons (format "request %s failed:" method) (cdr reply))))
      (_ (signal 'jsonrpc-error
                 (list (format "request %s failed:" method)
                       (cons 'jsonrpc-error-message
                             (if (process-live-p process) "Timed out" "the daemon went away"))))))))

(defun quire--shared-buffers ()
  "The buffers being shared."
  (seq-filter (lambda (buffer) (buffer-local-value 'quire--state buffer)) (buffer-list)))

(defun quire--schedule-reconnect ()
  "After the daemon went away, start it again later, backing off up to 5 seconds."
  (setq quire--connection nil quire--links-up nil)
  (quire--drop-all-pending)   ; the reopen sends the text
  (when (and (not quire--stopping) (not quire--reconnect-timer) (quire--shared-buffers))
    (setq quire--reconnect-timer (run-at-time quire--reconnect-delay nil #'quire--reconnect))
    (setq quire--reconnect-delay (min 5 (* 2 quire--reconnect-delay)))))

(defun quire--reconnect ()
  "Start the daemon again and reopen every shared buffer.
Each reopen sends the buffer's text with the view the daemon keeps of it,
and the epoch and revision the buffer was at in it, so what was typed
meanwhile is resolved against exactly what the buffer had been sent (an
edit in flight that reached the daemon is in that view already).  No base:
the daemon keeps what each editor saw; where it has no view (its data
directory lost) the open rules apply, and -32017 asks the person.
Whatever stops it half way starts it over later: an error, and also a non-local
exit, which happens when this timer runs while another package waits for
a synchronous jsonrpc reply and that reply arrives first (its `throw'
unwinds through this function)."
  (setq quire--reconnect-timer nil)
  (let ((reopened nil))
    (unwind-protect
        (ignore-errors
          (quire--reconnect-and-reopen)
          (setq reopened t))
      (unless reopened
        (let ((half-made quire--connection))
          (setq quire--connection nil)
          (when half-made (ignore-errors (delete-process (jsonrpc--process half-made)))))
        (quire--schedule-reconnect)))))

(defun quire--reconnect-and-reopen ()
  "Start the daemon and reopen every shared buffer; see `quire--reconnect'."
  (quire--drop-all-pending)   ; for the old connection: the reopen sends the text
  (quire--connect)
  (setq quire--reconnect-delay 0.25)
  (dolist (buffer (quire--shared-buffers))
    (with-current-buffer buffer
      ;; Without a view the daemon still has, other text is refused (-32017) and the person
      ;; is asked, as when sharing.
      (pcase-let ((`(,uri ,_reply ,apart-from ,_file)
                   (quire--open-asking (plist-get quire--state :uri) (quire--text) (plist-get quire--state :file)
                                       (quire--view-position))))
        (when apart-from
          (message "Quire: \"%s\" holds other text: your text is shared apart as \"%s\"" apart-from uri))))))

(defun quire--view-position ()
  "The view, epoch and revision this buffer was at, for a reopen.
Sent with `document/open' after the daemon went away.  The revision is
the number of daemon edits applied in the epoch, the one the next edit
would have been based on.  Nil without a view or an epoch."
  (let ((view (plist-get quire--state :view)) (epoch (plist-get quire--state :epoch)))
    (and (stringp view) (integerp epoch)
         (list :view view :epoch epoch :revision (plist-get quire--state :daemon)))))

(defun quire--buffer-of (uri)
  "The shared buffer of URI, or nil."
  (seq-find (lambda (buffer) (equal (plist-get (buffer-local-value 'quire--state buffer) :uri) uri))
            (buffer-list)))

(defun quire--on-notification (_connection method params)
  "Handle the daemon's notification METHOD with PARAMS."
  (let ((quire--in-filter t))
    (quire--dispatch-notification method params)))

(defun quire--dispatch-notification (method params)
  "Handle the daemon's notification METHOD with PARAMS."
  (pcase method
    ('document/edit
     (when-let ((buffer (quire--buffer-of (plist-get params :uri))))
       (with-current-buffer buffer (quire--on-daemon-edit params))))
    ('cursor/update
     (when-let ((buffer (quire--buffer-of (plist-get params :uri))))
       (with-current-buffer buffer (quire--on-cursor params)))
     (quire--follow-cursor params))
    ('window/showMessage (message "Quire: %s" (plist-get params :message)))
    ('document/forked (quire--on-document-forked params))
    ('document/readOnly (quire--on-read-only params))
    ('document/editRefused
     (unless (quire--read-only-refused (quire--buffer-of (plist-get params :uri)) (plist-get params :error))
       (message "Quire: the daemon refused an edit of %s (%s)" (plist-get params :uri)
                (or (plist-get (plist-get params :error) :message) "no reason"))))
    ('peer/changed (quire--on-peer-changed params))))

(defun quire--on-document-forked (params)
  "Say a peer has another document of the same name, kept as a copy, per PARAMS."
  (let* ((user (plist-get params :user))
         (address (plist-get params :address))
         (who (cond ((and (stringp user) (not (string-empty-p user))) user)
                    ((and (stringp address) (not (string-empty-p address))) (format "a peer (%s)" address))
                    (t "a peer")))
         (copy (plist-get params :copy)))
    (message (concat "Quire: %s has another document named \"%s\", created separately from yours. "
                     "Both are kept whole: theirs as \"%s\". M-x quire-open shows it, "
                     "M-x quire-merge merges its text into yours")
             who (plist-get params :uri) copy)))

(defun quire--on-peer-changed (params)
  "Show a peer joining, leaving or failing (with the reason), per PARAMS."
  (let* ((user (plist-get params :user))
         (who (if (and (stringp user) (not (string-empty-p user))) user (plist-get params :address)))
         (link (plist-get params :link))
         (reason (plist-get params :reason))
         (event (plist-get params :event)))
    ;; The daemon counts the links up; this only shows the count.
    (when (integerp (plist-get params :linksUp)) (setq quire--links-up (plist-get params :linksUp)))
    (force-mode-line-update t)
    (cond ((equal event "joined") (message "Quire: %s joined" who))
          ((equal event "failed") (message "Quire: %s%s" (if (eql link 0) "" (concat who ": ")) (or reason "failed")))
          (t (message "Quire: %s left%s" who (if reason (format " (%s)" reason) ""))))))

;;; Local changes

;; Each `after-change-functions' call is one change, its old text from what
;; `before-change-functions' saw.  A command that deletes a region and inserts its
;; replacement at the same place (`shell-command-on-region' replacing, a formatter that
;; erases and reinserts, `sort-lines', a yank over the selection) reports two changes, and
;; sent apart they would reach the daemon as "delete everything, then insert everything",
;; which carries a partner's token typed meanwhile inside a rewritten line to the end of the
;; region.  So a change is held (`quire--pending') and the next change that starts inside or
;; at the edges of the text it left is merged into it: one replacement, its range in the text
;; the first was made in, which the daemon diffs to the few characters that changed (lines
;; left alone keep their identity, and the partner's token stays in its line).  Changes apart
;; are never merged: the editor's records say more than a diff of their union.  The held
;; change is sent (`quire--flush') before the next change that does not touch it is made, at
;; the end of the command, before a daemon edit is applied, before any request, cursor update
;; or save, and on a zero-delay timer (a change made by a timer or a process, or by a command
;; that waits for input, such as `query-replace').  So it is never lost or reordered, it
;; counts as one edit when sent, and it carries the `undoGroup' it was made in.

(defvar-local quire--pending nil
  "The change made but not sent yet, as (BEG END OLD START GROUP).
BEG..END holds its new text in the buffer, OLD is the text it replaced,
START the protocol position of BEG in the text it was made in (nothing
before BEG changed since), GROUP the `undoGroup' it was made in.")

(defvar-local quire--pending-owner nil
  "The buffer `quire--pending' was held in.
A buffer cloned (`clone-indirect-buffer', `clone-buffer') copies the
variables of its original, the held change too, which is its original's
to send: sent by both, its text would reach the daemon twice.")

(defun quire--held ()
  "This buffer's held change (`quire--pending'), or nil.
A copy made by cloning the buffer that held it is forgotten here."
  (unless (eq quire--pending-owner (current-buffer))
    (setq quire--pending nil))
  quire--pending)

(defvar quire--pending-buffers nil "Buffers that may hold a change not sent yet.")

(defvar quire--flush-timer nil "The zero-delay timer that sends the held changes, if any.")

(defun quire--connected-p ()
  "Whether the daemon is there to send to."
  (and quire--connection (jsonrpc-running-p quire--connection)))

(defun quire--before-change (beg end)
  "Remember the text of BEG..END, about to change.
Some commands (`capitalize-word', `fill-paragraph') announce a wider region
here than the one `after-change-functions' reports as changed.  A held
change this one does not touch is sent first, in the text it was made in.
In an indirect buffer of a shared one, remembered by that one."
  (if-let ((base (quire--shared-base)))
      (with-current-buffer base (save-restriction (widen) (quire--before-change beg end)))
    (when (and quire--state (not quire--applying))
      (pcase (quire--held)
        (`(,held-beg ,held-end . ,_) (when (or (< end held-beg) (> beg held-end)) (quire--flush))))
      (setq quire--before (list beg end (buffer-substring-no-properties beg end))))))

(defun quire--text-at-p (pos text)
  "Whether the buffer holds TEXT at POS."
  (and (<= (+ pos (length text)) (point-max))
       (string= text (buffer-substring-no-properties pos (+ pos (length text))))))

(defun quire--old-text (beg end old-length)
  "The text the change making BEG..END of OLD-LENGTH characters replaced, or nil.
Taken from what `quire--before-change' saw; nil when that region does not
hold the old range or the buffer around the change is not what it held,
which is when the change records do not add up.  Moves the recorded region
on to the text the change left, for a command that reports several changes
after one `before-change-functions' call."
  (pcase quire--before
    (`(,from ,to ,text)
     (let ((offset (- beg from)))
       (when (and (<= from beg) (<= (+ beg old-length) to)
                  (quire--text-at-p from (substring text 0 offset))
                  (quire--text-at-p end (substring text (+ offset old-length))))
         (let ((old (substring text offset (+ offset old-length)))
               (new (buffer-substring-no-properties beg end)))
           (setq quire--before (list from (+ to (- (length new) old-length))
                                     (concat (substring text 0 offset) new (substring text (+ offset old-length)))))
           old))))))

(defun quire--range-change (start old new)
  "The protocol change replacing OLD, from position START, with NEW."
  (let ((breaks (cl-count ?\n old)))
    (list :range (list :start start
                       :end (if (zerop breaks)
                                (list :line (plist-get start :line)
                                      :character (+ (plist-get start :character) (length old)))
                              (list :line (+ (plist-get start :line) breaks)
                                    :character (- (length old) 1 (cl-position ?\n old :from-end t)))))
          :text new)))

(defun quire--exact-change (beg end old-length)
  "The change that made BEG..END out of OLD-LENGTH characters, or nil.
See `quire--old-text', which this moves on."
  (when-let ((old (quire--old-text beg end old-length)))
    (quire--range-change (quire--position beg) old (buffer-substring-no-properties beg end))))

(defun quire--after-change (beg end old-length)
  "Record the change that made BEG..END of OLD-LENGTH characters, for the daemon.
Merged into the held change when it touches it, else held itself after
that one is sent.  The old text comes from `quire--before-change'; when the
two records do not add up, the whole text goes at once, which the daemon
reduces to the minimal edits (it holds the held change too).  While the
daemon is away nothing is sent or held: the reopen sends the whole text.
In an indirect buffer of a shared one, recorded as that one's change."
  (if-let ((base (quire--shared-base)))
      (with-current-buffer base (save-restriction (widen) (quire--after-change beg end old-length)))
    (quire--record-change beg end old-length)))

(defun quire--record-change (beg end old-length)
  "Record the change that made BEG..END of OLD-LENGTH characters.
See `quire--after-change'."
  (when (and quire--state (not quire--applying))
    (let ((old (and (quire--connected-p) (quire--old-text beg end old-length))))
      (cond
       ((not (quire--connected-p)) (setq quire--before nil quire--pending nil))
       ((not old)
        (setq quire--before nil quire--pending nil)
        (quire--send-counted (list :text (quire--text))))
       ;; Text properties only (`put-text-property', `add-face-text-property'): nothing to send.
       ((string= old (buffer-substring-no-properties beg end)))
       (t
        (pcase (quire--held)
          ((and `(,held-beg ,held-end ,held-old ,start ,group)
                (guard (and (<= beg held-end) (>= (+ beg old-length) held-beg))))
           ;; It starts inside or at the edges of the held change's text: one change, whose
           ;; old text is the held one's with what this one replaced on either side of it.
           (let ((left (if (< beg held-beg) (substring old 0 (- held-beg beg)) ""))
                 (right (if (> (+ beg old-length) held-end) (substring old (- held-end beg)) "")))
             (setq quire--pending
                   (list (min beg held-beg)
                         (+ (max held-end (+ beg old-length)) (- end beg old-length))
                         (if (and (equal left "") (equal right "")) held-old (concat left held-old right))
                         (if (< beg held-beg) (quire--position beg) start)
                         group))))
          (`(,held-beg . ,_)
           ;; Apart from it (announced wider before the change, so not sent then): the held
           ;; change goes first, its text moved by this one when this one is before it.
           (unless (quire--flush (if (< beg held-beg) (- end beg old-length) 0))
             (quire--hold (list beg end old (quire--position beg) quire--undo-group))))
          (_ (quire--hold (list beg end old (quire--position beg) quire--undo-group)))))))))

(defun quire--hold (change)
  "Hold CHANGE, a `quire--pending', until it is sent; see \"Local changes\"."
  (setq quire--pending change quire--pending-owner (current-buffer))
  (cl-pushnew (current-buffer) quire--pending-buffers)
  (unless quire--flush-timer
    (setq quire--flush-timer (run-at-time 0 nil #'quire--flush-timer-fired))))

(defun quire--flush-timer-fired ()
  "Send the held changes: Emacs waits for input or output."
  (setq quire--flush-timer nil)
  (quire--flush-all))

(defun quire--flush-all ()
  "Send every buffer's held change."
  (let ((buffers quire--pending-buffers))
    (setq quire--pending-buffers nil)
    (when quire--flush-timer (cancel-timer quire--flush-timer) (setq quire--flush-timer nil))
    (dolist (buffer buffers)
      (when (buffer-live-p buffer)
        (with-current-buffer buffer (quire--flush))))))

(defun quire--flush-before-exit ()
  "Send the held changes as Emacs exits, in the command or script that made them.
Emacs kills `quire attach' as it exits, which would drop what it has not
relayed yet: so a request's reply is awaited after them, one second at most."
  (when (and (quire--connected-p)
             (seq-some (lambda (buffer) (and (buffer-live-p buffer) (buffer-local-value 'quire--pending buffer)))
                       quire--pending-buffers))
    (if quire--in-filter
        (quire--flush-all)
      (let ((quire--request-timeout 1))
        (ignore-errors (quire--request :quire/status (make-hash-table)))))))

(defun quire--drop-all-pending ()
  "Forget the held changes: the daemon went away, and the reopen sends the text."
  (dolist (buffer quire--pending-buffers)
    (when (buffer-live-p buffer)
      (with-current-buffer buffer (setq quire--pending nil))))
  (setq quire--pending-buffers nil))

(defun quire--flush (&optional shift)
  "Send this buffer's held change, if any.
SHIFT: how far its text moved since, by a change before it that is not
sent yet.  The text comes from the buffer; should its region not fit the
buffer (which the records exclude), the whole text goes instead and the
value is t: it holds every change made so far."
  (when-let ((held (quire--held)))
    (setq quire--pending nil)
    (when (and quire--state (quire--connected-p))
      (pcase-let ((`(,beg ,end ,old ,start ,group) held))
        (let ((beg (+ beg (or shift 0))) (end (+ end (or shift 0))) (quire--undo-group group))
          (save-restriction
            (widen)
            (if (<= (point-min) beg end (point-max))
                (let ((new (buffer-substring-no-properties beg end)))
                  ;; Undone before it was sent (a cancelled `atomic-change-group'): nothing.
                  (unless (string= old new)
                    (quire--send-counted (quire--range-change start old new)))
                  nil)
              (setq quire--before nil)
              (quire--send-counted (list :text (quire--text)))
              t)))))))

(defun quire--flush-before-set-buffer-multibyte (&rest _)
  "Send the held change before `set-buffer-multibyte' changes what positions count.
Made multibyte or unibyte, a buffer's positions count characters or bytes:
the held change's region would then cover other text.  That runs no change hook."
  (when quire--pending (quire--flush)))

(advice-add 'set-buffer-multibyte :before #'quire--flush-before-set-buffer-multibyte)

(defun quire--send-counted (change)
  "Send CHANGE and count it: the editor revision goes up by one."
  (quire--send-edit change)
  (setq quire--state (plist-put quire--state :editor (1+ (plist-get quire--state :editor)))))

(defun quire--send-edit (change)
  "Send CHANGE as a request, named and with the cursor.
An accepted edit needs nothing more (the daemon keeps what this editor
saw); a refusal is shown and the buffer resynced with its text kept.  A
daemon that just died makes sending fail.  The error is caught, since an
error in `after-change-functions' would reset that hook, and the reopen
merges the edit."
  (let* ((buffer (current-buffer)) (epoch (plist-get quire--state :epoch))
         (id (format "%s-%d" quire--instance (setq quire--edit-count (1+ quire--edit-count))))
         (mine (lambda () (and (buffer-live-p buffer)
                               (equal epoch (plist-get (buffer-local-value 'quire--state buffer) :epoch))))))
    (condition-case nil
        (progn
          (jsonrpc-async-request
           quire--connection :document/edit
           (append (list :uri (plist-get quire--state :uri) :epoch epoch :editId id :cursor (quire--position (point))
                         :revision (plist-get quire--state :daemon) :changes (vector change))
                   ;; The edits of one command are one undo step of the daemon's.
                   (and quire--undo-group (list :undoGroup quire--undo-group)))
           :success-fn #'ignore
           :error-fn (lambda (error)
                       ;; -1: the daemon died (jsonrpc's code); the reopen merges the edit.
                       (when (and (funcall mine) (not (eql (plist-get error :code) -1)))
                         (with-current-buffer buffer (quire--refused error))))
           :timeout-fn #'ignore))
      (error nil))))

(defun quire--refused (error)
  "The daemon refused an edit with ERROR: say so and resync, keeping the text.
Every later edit of the epoch is refused too, until the resync.  A
read-only document's refusal brings the shared text back instead."
  (unless (or (quire--read-only-refused (current-buffer) error) (plist-get quire--state :resyncing))
    (setq quire--state (plist-put quire--state :resyncing t))
    (message "Quire: the daemon refused an edit (%s); resyncing, your text is kept" (plist-get error :message))
    (let ((buffer (current-buffer)))
      (run-at-time 0 nil (lambda () (when (buffer-live-p buffer)
                                      (with-current-buffer buffer (quire--resync-keeping-text))))))))

(defun quire--resync-keeping-text ()
  "Resync after a refusal: the daemon merges what the buffer shows.
It resolves the buffer's text against what it had sent this buffer at its
epoch and daemon revision, by identity, as an edit; the buffer then shows
the result: its own text, and what others typed meanwhile.  No base: the
daemon knows what this editor saw.  A resync the daemon refuses too (the
document has no room for the text, -32018) changes nothing: the buffer
keeps its text, unshared, the person is told why, and the next refused edit
tries again."
  (when (and quire--state quire--connection)
    (let* ((text (quire--text)) (buffer (current-buffer))
           (reply (condition-case failure
                      (quire--request :document/resync (list :uri (plist-get quire--state :uri) :text text
                                                             :epoch (plist-get quire--state :epoch)
                                                             :revision (plist-get quire--state :daemon))
                                      (lambda (result) (quire--resynced buffer result)))
                    (jsonrpc-error
                     (setq quire--state (plist-put quire--state :resyncing nil))
                     (message "Quire: your text stays in this buffer but is not shared: %s"
                              (alist-get 'jsonrpc-error-message (cddr failure)))
                     nil))))
      reply)))

(defun quire--resynced (buffer reply)
  "BUFFER shows the text of the resync REPLY, and is at its new epoch."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (when quire--state
        (unless (equal (plist-get reply :text) (quire--text))
          (quire--replace-text (plist-get reply :text)))
        (setq quire--state (quire--resynced-state (plist-get reply :epoch)))))))

;;; Undo: the daemon's

;; Emacs's own undo list would hold positions that others' edits move, so a shared buffer
;; records none (`buffer-undo-list' is t while shared).  `undo' (C-/, C-_, C-x u),
;; `undo-only' and `undo-redo' are remapped in `quire-mode-map' to `quire-undo' and
;; `quire-redo', which ask the daemon: it reverts this editor's own last step by identity
;; (never others' text, even typed inside it) and sends the change back as a daemon edit.
;; The edits of one command carry the same `undoGroup', so they are one step; consecutive
;; `self-insert-command's share one, up to 20, as Emacs's own undo amalgamates them.

(defvar quire--command-count 0 "Commands seen, for their `undoGroup'.")

(defvar quire--amalgamated 0 "Consecutive self-insertions in the last command's `undoGroup'.")

(defun quire--command-starts ()
  "Give the command starting its `undoGroup'.
A self-insertion right after one keeps its group, up to 20 of them.
What the last one changed is sent first, in its group."
  (quire--flush-all)
  (if (and (eq this-command 'self-insert-command) (eq last-command 'self-insert-command)
           (< quire--amalgamated 20))
      (setq quire--amalgamated (1+ quire--amalgamated))
    (setq quire--command-count (1+ quire--command-count)
          quire--amalgamated 1))
  (setq quire--undo-group quire--command-count))

(defun quire--command-ends ()
  "Send what the command changed; edits between commands are one undo step each.
Those (timers, process output) carry no group."
  (quire--flush-all)
  (setq quire--undo-group nil))

(defun quire--undo-or-redo (method count)
  "Send METHOD (`document/undo' or `document/redo') up to COUNT times.
Stops at the first reply with `done' false: nothing of this editor's left."
  (unless quire--state (user-error "Quire: this buffer is not shared"))
  (quire--connect)
  (let ((done 0))
    (while (and (< done count)
                (eq (plist-get (quire--request method (list :uri (plist-get quire--state :uri))) :done) t))
      (setq done (1+ done)))
    (when (< done count)
      (message "Quire: nothing of yours left to %s" (if (eq method :document/undo) "undo" "redo")))
    done))

(defun quire-undo (&optional count)
  "Undo your own last COUNT changes to the shared document (others' stay).
The daemon reverts them and sends the change back as its edit."
  (interactive "p")
  (quire--undo-or-redo :document/undo (max 1 (or count 1))))

(defun quire-redo (&optional count)
  "Redo your own last COUNT undone changes to the shared document."
  (interactive "p")
  (quire--undo-or-redo :document/redo (max 1 (or count 1))))

(defvar quire-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map [remap undo] #'quire-undo)
    (define-key map [remap undo-only] #'quire-undo)
    (define-key map [remap undo-redo] #'quire-redo)
    map)
  "Keys of a shared buffer: undo and redo go through the daemon.")

;;; Read-only documents (protocol/decisions/roles.md)

;; Where this daemon's role in a document's project does not allow changing it, the buffer is
;; `buffer-read-only' (the daemon's changes still go in: `inhibit-read-only'), and the person is
;; told why once: the first time they try to type (Emacs says "Buffer is read-only", after
;; which `quire--command-error' runs) or the daemon refuses an edit.  `document/readOnly' makes
;; the buffer writable again, or read-only.

(defvar-local quire--read-only nil "Non-nil while the daemon says this buffer may not change.")
(defvar-local quire--read-only-reason nil "The daemon's sentence saying why.")
(defvar-local quire--told-read-only nil "Non-nil once the person was told why.")
(defvar-local quire--was-read-only nil "`buffer-read-only' before the daemon made it read-only.")

(defun quire--set-read-only (read-only reason)
  "Make the buffer read-only (READ-ONLY non-nil) or writable again.
REASON is the daemon's sentence (\"you can read notes but not change it
\(role read)\")."
  (setq quire--read-only-reason reason)
  (cond ((and read-only (not quire--read-only))
         (setq quire--read-only t quire--told-read-only nil quire--was-read-only buffer-read-only
               buffer-read-only t)
         (unless (advice-function-member-p #'quire--command-error command-error-function)
           (add-function :after command-error-function #'quire--command-error))
         (force-mode-line-update))
        ((and (not read-only) quire--read-only)
         (setq quire--read-only nil buffer-read-only quire--was-read-only)
         (when reason (message "Quire: %s" reason))
         (force-mode-line-update))))

(defun quire--read-only-from (reply)
  "Take the read-only state a `document/open' REPLY says."
  (quire--set-read-only (eq (plist-get reply :readOnly) t) (plist-get reply :readOnlyReason)))

(defun quire--on-read-only (params)
  "The daemon says whether the buffer of PARAMS' uri may change."
  (when-let ((buffer (quire--buffer-of (plist-get params :uri))))
    (with-current-buffer buffer
      (quire--set-read-only (eq (plist-get params :readOnly) t) (plist-get params :reason)))))

(defun quire--tell-read-only ()
  "Say once why the buffer cannot change."
  (when (and quire--read-only (not quire--told-read-only))
    (setq quire--told-read-only t)
    (message "Quire: %s" (or quire--read-only-reason "this document is read-only here"))))

(defun quire--command-error (data _context _caller)
  "After Emacs showed a command's error DATA: say why a shared buffer is read-only.
Once per buffer, when the command tried to change a buffer the daemon made
read-only (the error `buffer-read-only')."
  (when (eq (car-safe data) 'buffer-read-only)
    (let ((buffer (if (bufferp (cadr data)) (cadr data) (current-buffer))))
      (when (buffer-live-p buffer)
        (with-current-buffer buffer (quire--tell-read-only))))))

(defun quire--read-only-refused (buffer error)
  "Whether ERROR refused an edit of BUFFER because it is read-only here (-32019).
Then the buffer becomes read-only, the person is told once, and the shared
text comes back (what was typed cannot go in)."
  (when (and (eql (plist-get error :code) -32019) (buffer-live-p buffer)
             (buffer-local-value 'quire--state buffer))
    (with-current-buffer buffer
      (quire--set-read-only t (or (plist-get (plist-get error :data) :reason) quire--read-only-reason))
      (quire--tell-read-only)
      (unless (plist-get quire--state :resyncing)
        (setq quire--state (plist-put quire--state :resyncing t))
        (run-at-time 0 nil (lambda ()
                             (when (buffer-live-p buffer)
                               (with-current-buffer buffer
                                 (when quire--state
                                   (setq quire--state (plist-put quire--state :resyncing nil))
                                   (quire-resync)))))))
      t)))

;;; The daemon's edits

(defun quire--apply-changes (changes)
  "Apply the daemon's CHANGES in order, unreported and kept out of undo.
Others' edits neither lock the visited file nor ask about a file changed on
disk: the daemon merges such changes itself."
  (setq quire--before nil)
  (let ((quire--applying t) (inhibit-modification-hooks t) (inhibit-read-only t)
        (buffer-file-name nil) (buffer-file-truename nil))
    (save-excursion
      (save-restriction
        (widen)
        (seq-doseq (change changes)
          (let* ((range (plist-get change :range))
                 (start (quire--point (plist-get range :start)))
                 ;; The end is searched from the start's line: one scan of the buffer, not two.
                 (end (and start (quire--point (plist-get range :end)
                                               (cons (plist-get (plist-get range :start) :line)
                                                     (save-excursion (goto-char start) (line-beginning-position)))))))
            (unless (and start end) (error "Quire: change outside the buffer"))
            (let ((text (plist-get change :text)))
              (let ((buffer-undo-list t))
                (goto-char start)
                (delete-region start end)
                (insert text)))))))))

(defun quire--on-daemon-edit (params)
  "Apply the daemon's edit PARAMS if based on every edit we sent.
Otherwise drop it: the daemon sends it again.  A change held is sent
first, so such an edit is not based on it and is dropped."
  (quire--flush)
  (when (and (equal (plist-get params :epoch) (plist-get quire--state :epoch))
             (equal (plist-get params :revision) (plist-get quire--state :editor)))
    (condition-case nil
        (progn
          (quire--apply-changes (plist-get params :changes))
          (setq quire--state (plist-put quire--state :daemon (1+ (plist-get quire--state :daemon))))
          (when (and (plist-get quire--state :saved-hash)
                     (equal (plist-get params :hash) (plist-get quire--state :saved-hash)))
            ;; The buffer now shows what `quire-save' wrote.
            (set-buffer-modified-p nil)
            (setq quire--state (plist-put quire--state :saved-hash nil)))
          (when (plist-get params :hash)
            (quire--check-hash-later (plist-get params :hash))))
      (error (quire--resync-later)))))

(defvar-local quire--hash-timer nil "The pending hash check, if any.")

(defun quire--check-hash-later (hash)
  "Check once edits pause that the buffer has HASH, and resync if not.
Hashing a long buffer costs milliseconds, so it is not done per keystroke."
  (when quire--hash-timer (cancel-timer quire--hash-timer))
  (let ((buffer (current-buffer))
        (at (list (plist-get quire--state :editor) (plist-get quire--state :daemon))))
    (setq quire--hash-timer
          (run-at-time 0.1 nil
                       (lambda ()
                         (when (buffer-live-p buffer)
                           (with-current-buffer buffer
                             (setq quire--hash-timer nil)
                             (when (and quire--state (not (quire--held))
                                        (equal at (list (plist-get quire--state :editor) (plist-get quire--state :daemon)))
                                        (not (equal hash (quire--hash))))
                               (quire-resync)))))))))

(defun quire-resync ()
  "Replace the buffer with the daemon's text and start a new epoch.
This is the escape hatch when the buffer and the daemon disagree."
  (interactive)
  (when quire--state
    (let ((buffer (current-buffer)))
      (quire--request :document/resync (list :uri (plist-get quire--state :uri))
                      (lambda (result) (quire--resynced buffer result))))))

(defun quire--resync-later ()
  "Resync once the notification being handled is over.
A request cannot wait inside the daemon's process filter (`quire--request')."
  (let ((buffer (current-buffer)))
    (run-at-time 0 nil (lambda () (when (buffer-live-p buffer)
                                    (with-current-buffer buffer (quire-resync)))))))

(defun quire--replace-text (text)
  "Replace the whole buffer with TEXT, unreported and out of undo."
  (setq quire--before nil)
  (let ((quire--applying t) (inhibit-modification-hooks t) (inhibit-read-only t))
    (save-excursion
      (save-restriction
        (widen)
        (let ((buffer-undo-list t))
          (erase-buffer)
          (insert text)))))
  ;; The recorded positions no longer mean anything in the new text.
  (when (listp buffer-undo-list) (setq buffer-undo-list nil)))

(defun quire--saved ()
  "After `save-buffer': tell the daemon the file holds this buffer's text.
So the daemon does not take our own edits for a change made outside Quire.
Only when the file written is the one the document is bound to: a buffer
renamed by `write-file' or `set-visited-file-name' is bound to its new file
before it is written (`quire--visited-file-changed'); any other file is not
the document's."
  (quire--flush)
  (when (and quire--state quire--connection (plist-get quire--state :file)
             (plist-get quire--state :epoch)
             (equal (and buffer-file-name (expand-file-name buffer-file-name)) (plist-get quire--state :file)))
    (ignore-errors   ; a daemon that just died must not fail the save
     (jsonrpc-notify quire--connection :document/saved
                    (list :uri (plist-get quire--state :uri) :epoch (plist-get quire--state :epoch)
                          :revision (plist-get quire--state :daemon))))))

(defun quire--visited-file-changed ()
  "Bind the document to the file the buffer visits now.
Run by `set-visited-file-name' (so `write-file', \\[write-file]), which
changes the name before the buffer is written: the document is closed and
opened again with the buffer's text as text and base and the new file, so
nothing is merged, others' text in flight comes with the reply, and the
next `document/saved' and `quire-save' are about the new file.  The old
file is left as it is.  A buffer that visits no file any more is bound to
none.  `set-visited-file-name' also drops `revert-buffer-function': it is
set again."
  (when quire--state
    (quire--install-revert)
    (let ((file (and buffer-file-name (expand-file-name buffer-file-name))))
      (unless (equal file (plist-get quire--state :file))
        (setq quire--state (plist-put quire--state :file file))
        ;; While the daemon is away, the reconnection opens it with the new file.
        (when (and quire--connection (jsonrpc-running-p quire--connection))
          (quire--reopen (quire--text) t))
        (when (equal file (plist-get quire--state :file))
          (message "Quire: \"%s\" is bound to %s now" (plist-get quire--state :uri) (or file "no file")))))))

(defun quire-save ()
  "Let the daemon write the shared text to this buffer's file, atomically.
What changed in the file outside Quire is merged first."
  (interactive)
  (when quire--state
    (let ((reply (quire--request :document/save (list :uri (plist-get quire--state :uri)))))
      ;; The daemon rewrote the file: it is not a change to warn about when edits arrive.
      (when buffer-file-name (set-visited-file-modtime))
      (if (equal (plist-get reply :hash) (quire--hash))
          (set-buffer-modified-p nil)
        ;; The change merged from the file is still on its way.
        (setq quire--state (plist-put quire--state :saved-hash (plist-get reply :hash))))
      (message "Quire: saved %s" (plist-get reply :path)))))

;;; Cursors

(defun quire--on-cursor (params)
  "Show the selections in PARAMS of another session."
  (let ((session (plist-get params :session)))
    (when-let ((old (alist-get session quire--cursors)))
      (mapc #'delete-overlay old))
    (setf (alist-get session quire--cursors)
          (seq-mapcat
           (lambda (selection)
             (let* ((pos (or (quire--point (plist-get selection :end)) (point-max)))
                    (anchor (or (quire--point (plist-get selection :start)) pos))
                    (overlay (make-overlay pos (min (1+ pos) (point-max))))
                    (name (plist-get (plist-get params :user) :name)))
               (overlay-put overlay 'face 'quire-cursor-face)
               (overlay-put overlay 'help-echo name)
               (overlay-put overlay 'after-string (propertize (concat " " name " ") 'face 'quire-name-face))
               (if (= anchor pos)
                   (list overlay)
                 (let ((region (make-overlay (min anchor pos) (max anchor pos))))
                   (overlay-put region 'face 'quire-selection-face)
                   (list overlay region)))))
           (plist-get params :selections)))))

(defun quire--send-cursor ()
  "Tell the daemon where point is, after what the command changed."
  (quire--flush)
  (when (and quire--state quire--connection (jsonrpc-running-p quire--connection))
    (let ((position (quire--position (point))))
      ;; `ignore-errors': an error in `post-command-hook' would remove this function from it.
      (ignore-errors
       (jsonrpc-notify quire--connection :cursor/update
                      (list :uri (plist-get quire--state :uri) :epoch (plist-get quire--state :epoch)
                            :revision (plist-get quire--state :daemon)
                            :selections (vector (list :start position :end position))))))))

;;; Commands

(defun quire--lighter ()
  "The mode line text: Quire, with the number of peer links or while reconnecting."
  (cond ((not (and quire--connection (jsonrpc-running-p quire--connection))) " Quire[reconnecting]")
        (quire--read-only " Quire[read-only]")
        ((and (integerp quire--links-up) (> quire--links-up 0)) (format " Quire[%d]" quire--links-up))
        (t " Quire")))

(defvar-local quire--revert-function nil
  "The `revert-buffer-function' of the major mode; `quire--revert-buffer' runs it.")

;; An indirect buffer (`make-indirect-buffer', `org-tree-to-indirect-buffer') shares its base
;; buffer's text, but a change made in it runs its own change hooks only, not the base's: the
;; change would never reach the daemon.  Such a change is recorded as the shared base buffer's
;; (positions are the same in both), held and sent by it.  So is one made in a clone
;; (`clone-indirect-buffer'), which copied the base's variables and hooks: recorded by itself,
;; its change and one the base holds would each be sent in a text without the other.

(defun quire--shared-base ()
  "The base buffer of this indirect buffer when that one is shared, else nil."
  (let ((base (buffer-base-buffer)))
    (and base (buffer-local-value 'quire--state base) base)))

(defun quire--indirect-before-change (beg end)
  "In an indirect buffer of a shared one, `quire--before-change' in its base.
BEG and END as `before-change-functions' give them.  A clone runs that
itself, from the hooks it copied."
  (when (and (not quire--state) (buffer-base-buffer))
    (quire--before-change beg end)))

(defun quire--indirect-after-change (beg end old-length)
  "In an indirect buffer of a shared one, `quire--after-change' in its base.
BEG, END and OLD-LENGTH as `after-change-functions' give them."
  (when (and (not quire--state) (buffer-base-buffer))
    (quire--after-change beg end old-length)))

(defconst quire--tracking-hooks
  '((before-change-functions . quire--before-change)
    (after-change-functions . quire--after-change)
    (post-command-hook . quire--send-cursor)
    (after-save-hook . quire--saved)
    (after-set-visited-file-name-hook . quire--visited-file-changed)
    (after-change-major-mode-hook . quire--after-major-mode)
    (kill-buffer-hook . quire--killed))
  "The buffer-local hooks of a shared buffer.")

(define-minor-mode quire-mode
  "Share this buffer through the Quire daemon."
  :lighter (:eval (quire--lighter))
  :keymap quire-mode-map
  (if quire-mode
      (progn
        (pcase-dolist (`(,hook . ,function) quire--tracking-hooks) (add-hook hook function nil t))
        (add-hook 'pre-command-hook #'quire--command-starts)
        (add-hook 'post-command-hook #'quire--command-ends)
        ;; Undo goes through the daemon (`quire-undo'); Emacs's own list records nothing.
        (setq buffer-undo-list t)
        (add-hook 'find-file-hook #'quire--take-over-visit)
        (add-hook 'kill-emacs-hook #'quire--flush-before-exit)
        (add-hook 'before-change-functions #'quire--indirect-before-change)
        (add-hook 'after-change-functions #'quire--indirect-after-change)
        (quire--install-revert))
    (pcase-dolist (`(,hook . ,function) quire--tracking-hooks) (remove-hook hook function t))
    (when (eq buffer-undo-list t) (setq buffer-undo-list nil))   ; Emacs's own undo again, from here
    (quire--set-read-only nil nil)   ; writable again, as it was
    (when (eq revert-buffer-function #'quire--revert-buffer)
      (setq-local revert-buffer-function quire--revert-function))
    (when (and quire--connection quire--state)
      (ignore-errors (quire--request :document/close (list :uri (plist-get quire--state :uri)))))
    (setq quire--state nil quire--pending nil)))

;;; Buffer lifecycle: a major mode set again (`normal-mode'), `revert-buffer',
;;; `find-alternate-file', `kill-buffer'.

;; A shared buffer stays shared whatever resets its local variables.
(dolist (variable '(quire-mode quire--state quire--before quire--pending quire--pending-owner quire--cursors quire--hash-timer
                    quire--read-only quire--read-only-reason quire--told-read-only quire--was-read-only))
  (put variable 'permanent-local t))
(pcase-dolist (`(,_ . ,function) quire--tracking-hooks)
  (put function 'permanent-local-hook t))

(defun quire--after-major-mode ()
  "Keep tracking changes after a major mode reset the local variables.
Emacs 28 keeps the hook functions that are `permanent-local-hook' in
`before-change-functions' and `after-change-functions', but does not call
them until the buffer's bindings are loaded again: set them again here."
  (pcase-dolist (`(,hook . ,_) quire--tracking-hooks)
    (when (local-variable-p hook) (set (make-local-variable hook) (symbol-value hook))))
  (quire--install-revert))

(defun quire--install-revert ()
  "Make `revert-buffer' in this shared buffer go through `quire--revert-buffer'.
Run again after each major mode, which resets `revert-buffer-function'."
  (unless (eq revert-buffer-function #'quire--revert-buffer)
    (setq quire--revert-function revert-buffer-function)
    (setq-local revert-buffer-function #'quire--revert-buffer)))

(defun quire--revert-buffer (&rest arguments)
  "Revert a shared buffer: `revert-buffer-function' with ARGUMENTS, changed so.
The file is not read into the buffer: the daemon, which the document is
bound to the file in, merges what changed in the file outside Quire into
the shared text, and the buffer shows the result.  So what others typed
is kept and a change made outside arrives once.  A buffer whose document
is bound to no file (its text kept apart) shows the shared text the same
way, without the file's change.  File-local variables are not applied,
since others may have typed them (see also `quire--without-local-variables').
A revert from the auto-save file is a recovery (`quire--recovering')."
  (let* ((enable-local-variables nil)
         (insert (or revert-buffer-insert-file-contents-function
                     #'revert-buffer-insert-file-contents--default-function))
         (revert-buffer-insert-file-contents-function
          (lambda (file auto-save-p)
            (cond ((and auto-save-p quire--state)
                   (quire--recovering (lambda () (funcall insert file auto-save-p))))
                  ((or auto-save-p (not quire--state)
                       (let ((bound (plist-get quire--state :file)))
                         (and bound (not (equal bound (expand-file-name file))))))
                   (funcall insert file auto-save-p))
                  (t (quire--merge-file-changes file (quire--text)))))))
    (apply (or quire--revert-function #'revert-buffer--default) arguments)))

(defun quire--recovering (read)
  "Call READ, which reads an auto-save file into this shared buffer, as a recovery.
What was typed before a crash, offline or unsaved, is in the auto-save file;
since then others may have typed in the document.  Read as an edit, the
auto-save's text would take back what they typed.  So the read is not
recorded; the document is opened again with the text read and, as `base',
the visited file's text, which the auto-save started from: the daemon's
three-way merge takes what the auto-save changed from the file as this
editor's edit, keeps what others typed, and counts a change both have once
\(protocol/README.md, the older fallback `base').  While the daemon is away
the read is recorded as usual, and the reopen sends it."
  (let ((file (and buffer-file-name (expand-file-name buffer-file-name))))
    (if (not (and file quire--state (quire--connected-p) (file-readable-p file)))
        (funcall read)
      (let ((base (let ((coding buffer-file-coding-system))
                    (with-temp-buffer
                      (let ((coding-system-for-read coding)) (insert-file-contents file))
                      (buffer-string)))))
        (quire--flush)
        (let ((quire--applying t)) (funcall read))
        (setq quire--before nil)
        (quire--reopen (quire--text) nil base)))))

(defun quire--recover-file (recover file)
  "Call RECOVER (`recover-file') on FILE; a shared buffer visiting FILE recovers.
See `quire--recovering'."
  (let ((buffer (get-file-buffer (expand-file-name file))))
    (if (and buffer (buffer-local-value 'quire--state buffer))
        (with-current-buffer buffer (quire--recovering (lambda () (funcall recover file))))
      (funcall recover file))))

(advice-add 'recover-file :around #'quire--recover-file)

;;; Shared text sets no local variables: anyone may have typed a -*- line or a
;;; Local Variables block (`eval:' included), and the text is read again often.

(defun quire--shared-text-p ()
  "Whether the current buffer shows shared text.
A shared buffer, or one visiting the file a shared buffer is bound to: the
buffer `find-alternate-file' makes reads the file before it takes the
document over (`quire--take-over-visit')."
  (or quire--state
      (and buffer-file-name
           (let ((file (expand-file-name buffer-file-name)))
             (seq-some (lambda (buffer) (equal (plist-get (buffer-local-value 'quire--state buffer) :file) file))
                       (quire--shared-buffers))))))

(defun quire--without-local-variables (function &rest arguments)
  "Call FUNCTION with ARGUMENTS, with `enable-local-variables' nil in shared text.
Around `hack-local-variables' and `set-auto-mode', which read a buffer's
local variables and its mode from its text wherever it is read again or
initialised: `normal-mode' (which binds `enable-local-variables' to t when
called as a command), a major mode's `run-mode-hooks', `revert-buffer',
`set-visited-file-name', `find-file' and `find-alternate-file'."
  (if (quire--shared-text-p)
      (let ((enable-local-variables nil)) (apply function arguments))
    (apply function arguments)))

(advice-add 'hack-local-variables :around #'quire--without-local-variables)
(advice-add 'set-auto-mode :around #'quire--without-local-variables)

(defun quire-unload-function ()
  "Remove the advice when `unload-feature' unloads quire."
  (advice-remove 'hack-local-variables #'quire--without-local-variables)
  (advice-remove 'set-auto-mode #'quire--without-local-variables)
  (advice-remove 'set-buffer-multibyte #'quire--flush-before-set-buffer-multibyte)
  (advice-remove 'recover-file #'quire--recover-file)
  (remove-hook 'kill-emacs-hook #'quire--flush-before-exit)
  (remove-hook 'before-change-functions #'quire--indirect-before-change)
  (remove-hook 'after-change-functions #'quire--indirect-after-change)
  (remove-function command-error-function #'quire--command-error)
  nil)

(defun quire--take-over-visit ()
  "Share a buffer that replaces a shared one visiting the same file.
`find-alternate-file' makes a new buffer, and kills the old one afterwards."
  (when-let* ((file (and buffer-file-name (not quire--state) (expand-file-name buffer-file-name)))
              (old (seq-find (lambda (buffer)
                               (and (not (eq buffer (current-buffer)))
                                    (null (buffer-local-value 'buffer-file-name buffer))
                                    (equal (plist-get (buffer-local-value 'quire--state buffer) :file) file)))
                             (quire--shared-buffers))))
    (let ((state (buffer-local-value 'quire--state old))
          (text (with-current-buffer old (quire--text))))
      (with-current-buffer old
        (quire--flush)
        ;; The document stays open: this buffer takes it.
        (setq quire--state nil)
        (quire-mode -1))
      (setq quire--state state)
      (quire-mode 1)
      (quire--merge-file-changes file text))))

(defun quire--merge-file-changes (file text)
  "Show the shared text, with what changed in FILE outside Quire merged in.
The file's change comes in when the document is bound to FILE (not when
its text is kept apart, bound to no file).  The buffer showed TEXT, as the
daemon knows.  The daemon merges the file's
changes when the document is opened, so it is opened again with TEXT as
both text and base (nothing of this editor's own to merge).  While the
daemon is away the buffer shows TEXT: the reopen then merges the file."
  (if (and quire--connection (jsonrpc-running-p quire--connection))
      (quire--reopen text)
    (quire--show-text text)
    (message "Quire: the daemon is away; changes to %s are merged when it is back" (file-name-nondirectory file)))
  (set-visited-file-modtime)
  (set-buffer-modified-p
   (not (equal (quire--text) (with-temp-buffer (insert-file-contents file) (buffer-string))))))

(defun quire--reopen (text &optional rebind base)
  "Open this buffer's document again, showing TEXT, and show the daemon's text.
REBIND (`write-file'): the close keeps the view, and the open names it
with the epoch and daemon revision the buffer is at instead of a base, as
a reopen after a restart does, so the daemon resolves TEXT against exactly
what it sent this buffer: a partner's edit in flight merges, and even an
edit it refused is kept; the undo history goes on.  With BASE (a
recovery, `quire--recovering'), BASE goes as the base: what changed from
it to TEXT is merged as this editor's edit.  Otherwise TEXT goes as the
base too: the buffer has nothing of its own to merge (its
edits in flight reached the daemon before the close), and a `base' is what
keeps the daemon from merging TEXT beyond the file as this editor's edit
\(which would put back what the file lost) or refusing the open (-32017);
only the file's own change comes in, through the binding.  The daemon's
edits in flight meanwhile are dropped (the epoch is nil): the reply brings
them.  Should the daemon fail half way, the connection is dropped, and
reconnecting opens the document again: by the old view when the close did
not reach the daemon, else by TEXT as the base.  A file the daemon refuses
to bind (-32016) is said so, and the document is then bound to no file."
  (let* ((uri (plist-get quire--state :uri)) (file (plist-get quire--state :file))
         (epoch (plist-get quire--state :epoch)) (reopened nil)
         (position (and rebind (quire--view-position)))
         (based (if position (append (list :uri uri :text text) position) (list :uri uri :text text :base (or base text))))
         (buffer (current-buffer))
         ;; Where the reply stands among the daemon's messages (`quire--request').
         (opened (lambda (reply)
                   (when (buffer-live-p buffer)
                     (with-current-buffer buffer
                       (setq quire--state (quire--opened-state uri reply file))
                       (quire--read-only-from reply)
                       (if (equal (quire--text) text)
                           (quire--apply-changes (plist-get reply :changes))
                         (quire--show-text (with-temp-buffer
                                             (insert text)
                                             (quire--apply-changes (plist-get reply :changes))
                                             (buffer-string)))))))))
    (setq quire--state (plist-put quire--state :epoch nil))
    (unwind-protect
        (progn
          (quire--request :document/close (append (list :uri uri) (and position '(:keepView t))))
          (condition-case failure
              (quire--request :document/open (append based (and file (list :file file))) opened)
            (jsonrpc-error
             ;; A file the daemon cannot bind (-32016: a symbolic link, not UTF-8
             ;; text, unreadable): said so, and the document is bound to no file.
             (unless (and file (eql (alist-get 'jsonrpc-error-code (cddr failure)) -32016))
               (signal (car failure) (cdr failure)))
             (message "Quire: %s; \"%s\" is bound to no file" (alist-get 'jsonrpc-error-message (cddr failure)) uri)
             (setq file nil)
             (quire--request :document/open based opened)))
          (setq reopened t))
      (unless reopened
        (setq quire--state (plist-put quire--state :epoch epoch))
        (when quire--connection (ignore-errors (delete-process (jsonrpc--process quire--connection))))))))

(defun quire--show-text (text)
  "Make the buffer show TEXT, changing only what differs.
Unreported and out of undo."
  (unless (equal text (quire--text))
    (let ((source (generate-new-buffer " *quire-text*" t)))
      (unwind-protect
          (let ((quire--applying t) (inhibit-modification-hooks t)
                (buffer-file-name nil) (buffer-file-truename nil))
            (with-current-buffer source (insert text))
            (setq quire--before nil)
            (save-restriction
              (widen)
              (let ((buffer-undo-list t)) (replace-buffer-contents source 1.0))))
        (kill-buffer source))
      ;; The recorded positions no longer mean anything in the new text.
      (when (listp buffer-undo-list) (setq buffer-undo-list nil)))))

(defun quire--killed ()
  "Close the document of a killed shared buffer, unless a buffer takes it over.
Decided once the command is over: `find-alternate-file' runs this hook
before it makes the buffer that takes over, and again when it kills this one."
  (quire--flush)
  (when quire--state
    (let ((uri (plist-get quire--state :uri)))
      (run-at-time 0 nil (lambda ()
                           (unless (quire--buffer-of uri)
                             (when quire--connection
                               (ignore-errors (quire--request :document/close (list :uri uri))))))))))

(defun quire-share (&optional name)
  "Share the current buffer as document NAME.
NAME nil (interactively, in a buffer visiting a file, unless with a prefix
argument): the daemon names the file by its path from its project root
\(protocol/README.md, \"Naming rule for files\"), and the reply says the name."
  (interactive (list (and (or current-prefix-arg (not buffer-file-name))
                          (read-string "Share as: " (unless buffer-file-name (buffer-name))))))
  (unless (or name buffer-file-name) (setq name (buffer-name)))
  (setq quire--stopping nil)
  (quire--connect)
  (pcase-let* ((file (and buffer-file-name (expand-file-name buffer-file-name)))
               ;; With :file the daemon merges changes made to the file outside Quire.
               (`(,uri ,reply ,apart-from ,_file) (quire--open-asking name (quire--text) file)))
    (quire-mode 1)
    (message "Quire: %s%s"
             (cond (apart-from (format "\"%s\" is shared with other text: your text is shared apart as \"%s\""
                                       apart-from uri))
                   ((eq (plist-get reply :created) t) (format "sharing \"%s\"" uri))
                   (t (format "joined \"%s\"" uri)))
             (if (and (integerp quire--links-up) (> quire--links-up 0)) (format " with %d peer link(s)" quire--links-up) ""))))

(defun quire--open-asking (name text file &optional reopen)
  "Open document NAME showing TEXT, bound to FILE.
NAME nil (FILE given): the daemon names the document.
REOPEN, after the daemon went away: the view, epoch and revision the
buffer was at (`quire--view-position'), sent with the first open only.
The buffer takes the reply where it stands among the daemon's messages
\(`quire--request'): its state, and the changes that bring it to the
shared text.  Return (URI REPLY APART-FROM FILE).
When NAME exists with other text and nothing says what the two have
in common, the daemon changes nothing and refuses (-32017): the person
is asked whether to take the shared
text, merge both (this text goes after the shared text) or keep this text
apart, shared as NAME~USER (then APART-FROM is NAME) and bound to no file
\(FILE is then nil), as in Vim and Neovim: the file
stays the document of its name's, which any open with the file binds, and
two documents bound to one file would each write it and import the
other's saves as changes made outside.  Until answered nothing is shared;
quitting the question leaves the buffer unshared."
  (let* ((uri name) (conflict nil) (apart-from nil) (reply nil) (buffer (current-buffer))
         (opened (lambda (result)
                   (when (buffer-live-p buffer)
                     (with-current-buffer buffer
                       (setq quire--state (quire--opened-state (or uri (plist-get result :uri)) result file))
                       (quire--read-only-from result)
                       (quire--apply-changes (plist-get result :changes)))))))
    (while (not reply)
      (condition-case failure
          (setq reply (quire--request :document/open
                                       (append (and uri (list :uri uri)) (list :text text)
                                               reopen
                                               (and conflict (list :conflict conflict))
                                               (and file (list :file file)))
                                       opened))
        (jsonrpc-error
         (let ((details (cddr failure)))
           (unless (eql (alist-get 'jsonrpc-error-code details) -32017)
             (signal (car failure) (cdr failure)))
           (setq reopen nil)   ; no view says what the two have in common
           ;; Left to the daemon, the name is in the refusal's data.
           (unless uri (setq uri (plist-get (alist-get 'jsonrpc-error-data details) :uri)
                             name uri))
           (pcase (car (quire--ask-document-differs uri (alist-get 'jsonrpc-error-data details)))
             (?t (setq conflict "take"))
             (?m (setq conflict "merge"))
             (_ (setq apart-from (or apart-from name)
                      uri (format "%s~%s" uri quire--user-name)
                      conflict nil
                      file nil)))))))
    ;; NAME nil: the daemon named the file, and every later open sends that name.
    (list (or uri (plist-get reply :uri)) reply apart-from file)))

(defun quire--ask-document-differs (uri data)
  "Ask what to do as document URI is shared with other text; DATA is -32017's.
Returns the choice of `read-multiple-choice'."
  (let ((characters (and (listp data) (plist-get data :characters))))
    (read-multiple-choice
     (format "Quire: \"%s\" is shared with other text%s; your buffer's text"
             uri (if (integerp characters) (format " (%d characters)" characters) ""))
     `((?t "take the shared text" "Replace this buffer's text with the shared text")
       (?m "merge both" "Add this buffer's text after the shared text, as your edit")
       (?k "keep mine apart" ,(format "Share this buffer's text as \"%s~%s\" instead" uri quire--user-name))))))

(defun quire-open (name)
  "Open document NAME in a new buffer."
  (interactive (list (completing-read "Document: " (quire--document-names))))
  (switch-to-buffer (generate-new-buffer name))
  (quire-share name))

(defun quire-listen (port)
  "Let other daemons connect on PORT (0 picks one)."
  (interactive "nPort (0 picks one): ")
  (quire--connect)
  (setq quire--listen-port (plist-get (quire--request :peer/listen (list :port port)) :port))
  (message "Quire: listening for peers on port %s" quire--listen-port))

(defun quire-disconnect (&optional link)
  "Take down peer LINK (as `quire-status' numbers them), or every link."
  (interactive (list (let ((text (read-string "Link (empty for all): "))) (and (not (string-empty-p text)) (string-to-number text)))))
  (quire--connect)
  (let ((links (if link (list link)
                 (mapcar (lambda (l) (plist-get l :link)) (plist-get (quire--request :peer/status (make-hash-table)) :links)))))
    (dolist (id links) (quire--request :peer/disconnect (list :link id)))
    (message "Quire: %s" (if links (format "disconnected link(s) %s" (mapconcat #'number-to-string links ", ")) "no peer links"))))

(defun quire-merge (from)
  "Copy the text of document FROM to the end of this buffer's document.
FROM is typically NAME#ID, a copy of this name created separately on another
daemon; undo takes the merge back."
  (interactive (list (completing-read "Merge document: " (quire--document-names))))
  (unless quire--state (user-error "Quire: this buffer is not shared"))
  (let ((reply (quire--request :document/merge (list :uri (plist-get quire--state :uri) :from from))))
    (message "Quire: merged %d characters of %s" (plist-get reply :merged) from)))

(defun quire--document-names ()
  "The names of the documents the daemon holds, its peers' included."
  (quire--connect)
  (mapcar (lambda (d) (plist-get d :uri)) (quire--request :document/list (make-hash-table))))

(defun quire-connect (host port &optional fingerprint)
  "Connect to the daemon at HOST and PORT.
With FINGERPRINT (as the other side's `quire-status' shows its key), only a
daemon holding that key is accepted."
  (interactive "sHost: \nnPort: \nsKey fingerprint (empty for any): ")
  (quire--connect)
  (quire--request :peer/connect (append (list :host host :port port)
                                        (and fingerprint (not (string-empty-p fingerprint))
                                             (list :fingerprint fingerprint))))
  (message "Quire: connecting to %s:%s%s; you are told when it is up" host port
           (if (and fingerprint (not (string-empty-p fingerprint))) (format " (key %s only)" fingerprint) "")))

(defun quire-connect-relay (host port &optional fingerprint)
  "Dial the relay (`quire relay') at HOST and PORT.
For two daemons that cannot reach each other (NAT): the relay pairs this daemon
with the one of the same secret and forwards their encrypted bytes; it is
dialed again whenever the link drops.  With FINGERPRINT, only a daemon holding
that key is accepted."
  (interactive "sRelay host: \nnPort: \nsKey fingerprint (empty for any): ")
  (quire--connect)
  (quire--request :peer/connect (append (list :host host :port port :relay t)
                                        (and fingerprint (not (string-empty-p fingerprint))
                                             (list :fingerprint fingerprint))))
  (message "Quire: dialing the relay %s:%s to be paired" host port))

(defun quire-connect-command (command)
  "Peer over COMMAND's stdin and stdout.
For example: ssh HOST quire peer --stdio."
  (interactive "sCommand: ")
  (quire--connect)
  (quire--request :peer/connect (list :command command)))

(defun quire-status ()
  "Show the daemon's editors, documents and peer links.
Also how many removed characters it keeps for peers, when any."
  (interactive)
  (quire--connect)
  (message "%s" (quire--status-summary (quire--request :quire/status (make-hash-table)))))

(defun quire--status-summary (status)
  "One line from the `quire/status' result STATUS.
The daemon counts (its `summary': editors, documents, links up, what peers
do not have yet, removed characters kept for peers, who is in which
document); this only words it."
  (let* ((storage (plist-get status :storage))
         (peers (plist-get status :peers))
         (s (plist-get status :summary))
         (links (plist-get s :links)) (up (plist-get s :linksUp))
         (behind (plist-get s :notYetSent)) (kept (plist-get s :removedKept)))
    (format "Quire: %d editor(s), %d document(s), %s%s%s%s; documents %s; your key %s%s"
            (plist-get s :editors) (plist-get s :documents)
            (if (zerop links) "no peer links" (format "%d of %d peer link(s) up" up links))
            (cond ((zerop up) "") ((zerop behind) ", in sync")
                  (t (format ", %d character(s) not yet with peers" behind)))
            (if (> kept 0) (format ", %d removed character(s) kept for peers" kept) "")
            (let ((people (plist-get s :people)))
              (if (seq-empty-p people) ""
                (concat "; with "
                        (mapconcat (lambda (person)
                                     (format "%s (%s)" (plist-get person :name)
                                             (mapconcat #'identity (plist-get person :documents) ", ")))
                                   people ", "))))
            (if (and storage (listp storage))
                (concat "kept in " (plist-get storage :dataDir)
                        (let ((failure (plist-get storage :failure)))
                          (if (stringp failure) (concat " (FAILED: " failure ")") "")))
              "in memory only")
            (plist-get peers :fingerprint)
            (mapconcat (lambda (link)
                         (let ((user (plist-get link :user)) (key (plist-get link :fingerprint)))
                           (format "; %s %s, %s%s"
                                   (if (string-empty-p user) (plist-get link :address) user)
                                   (plist-get link :state)
                                   (if (eq (plist-get link :encrypted) t) "encrypted" "NOT encrypted")
                                   (if (stringp key) (concat ", key " key) ""))))
                       (plist-get peers :links) ""))))

(defun quire-stop ()
  "Stop sharing every buffer and shut the daemon down."
  (interactive)
  (setq quire--stopping t quire--listen-port nil)
  (when quire--reconnect-timer (cancel-timer quire--reconnect-timer) (setq quire--reconnect-timer nil))
  (dolist (buffer (buffer-list))
    (when (buffer-live-p buffer)   ; turning the mode off kills hidden buffers on the way
      (with-current-buffer buffer (when quire-mode (quire-mode -1)))))
  (when quire--connection
    (ignore-errors (quire--request :shutdown (make-hash-table)))
    (ignore-errors (jsonrpc-notify quire--connection :exit (make-hash-table)))
    (ignore-errors (jsonrpc-shutdown quire--connection))
    (setq quire--connection nil)))

;;; Joining by opening a file

(defun quire--daemon-running-p ()
  "Whether a daemon runs for this user: its data directory's editor socket exists.
Where the daemon puts it: $XDG_RUNTIME_DIR/quire/editors-HASH.sock (HASH
the first 16 bytes of the SHA-256 of the data directory's real path, in
hex), else editors.sock in the data directory."
  (let* ((xdg (getenv "XDG_DATA_HOME"))
         (home (getenv "HOME"))
         (data (cond ((and xdg (string-prefix-p "/" xdg)) (concat xdg "/quire"))
                     ((and home (not (string-empty-p home))) (concat home "/.local/share/quire"))))
         (runtime (getenv "XDG_RUNTIME_DIR")))
    (and data (file-directory-p data)
         (let* ((socket (if (and runtime (string-prefix-p "/" runtime) (file-directory-p runtime))
                            (format "%s/quire/editors-%s.sock" (directory-file-name runtime)
                                    (substring (secure-hash 'sha256 (directory-file-name (file-truename data))) 0 32))
                          (concat data "/editors.sock")))
                (attributes (file-attributes socket)))
           (and attributes (string-prefix-p "s" (file-attribute-modes attributes)))))))

(defun quire--join-if-shared ()
  "Join the document of the file just visited when it lies in a shared project.
On `find-file-hook': when a daemon runs (this Emacs started one, or its
editor socket exists, and the `quire' started then attaches to it), the
daemon is asked to open the file only if it lies in a shared or joined
project (`ifShared').  A reply `{shared: false}' leaves the buffer alone;
an open shares it as `quire-share' does.  Never in the way of visiting."
  (when (and buffer-file-name (not quire--state) (not quire--stopping)
             (or (and quire--connection (jsonrpc-running-p quire--connection)) (quire--daemon-running-p)))
    (condition-case failure
        (progn
          (quire--connect)
          (let* ((buffer (current-buffer))
                 (file (file-truename buffer-file-name))
                 (reply (quire--request
                         :document/open (list :file file :ifShared t :text (quire--text))
                         (lambda (result)
                           (when (and (eq (plist-get result :shared) t) (buffer-live-p buffer))
                             (with-current-buffer buffer
                               (setq quire--state (quire--opened-state (plist-get result :uri) result file))
                               (quire--read-only-from result)
                               (quire--apply-changes (plist-get result :changes))))))))
            (cond ((eq (plist-get reply :shared) t)
                   (quire-mode 1)
                   (message "Quire: joined \"%s\"" (plist-get quire--state :uri)))
                  ((plist-get reply :uri)
                   ;; A daemon that does not know ifShared opened it as an ordinary open.
                   (ignore-errors (quire--request :document/close (list :uri (plist-get reply :uri))))))))
      (jsonrpc-error
       (if (eql (alist-get 'jsonrpc-error-code (cddr failure)) -32017)
           (quire-share)   ; in the project, with other text: the person decides
         (message "Quire: could not join %s: %s" buffer-file-name
                  (alist-get 'jsonrpc-error-message (cddr failure)))))
      (error (message "Quire: could not join %s: %s" buffer-file-name (error-message-string failure))))))

(add-hook 'find-file-hook #'quire--join-if-shared 90)

;;; Who is here, jump and follow.  The daemon says who is where (`quire/who':
;;; each person with their cursor in every document they are in, most recent
;;; first, in code points, with the file the document is bound to); this only
;;; moves windows.

(defun quire--people ()
  "Everyone whose cursor the daemon knows, as plists."
  (quire--connect)
  (append (plist-get (quire--request :quire/who (make-hash-table)) :people) nil))

(defun quire--place-words (place)
  "PLACE as a person reads it: its file (or document) and line."
  (let ((path (plist-get place :path)))
    (format "%s:%d" (if (stringp path) (file-relative-name path) (plist-get place :uri)) (1+ (plist-get place :line)))))

(defun quire-who ()
  "Say who is here, with each one's role and the file and line of their cursor.
The role (read, write, owner) is theirs in the project they are in now."
  (interactive)
  (let ((words (mapcar (lambda (person)
                         (let ((at (append (plist-get person :at) nil))
                               (tags (delq nil (list (and (eq (plist-get person :self) t) "you")
                                                     (and (stringp (plist-get person :role)) (plist-get person :role))))))
                           (format "%s%s %s%s" (plist-get person :name)
                                   (if tags (format " (%s)" (string-join tags ", ")) "")
                                   (quire--place-words (car at))
                                   (if (cdr at) (format " (+%d file%s)" (length (cdr at)) (if (cddr at) "s" "")) ""))))
                       (quire--people))))
    (message "Quire: %s" (if words (concat "here: " (string-join words ", ")) "nobody else is here"))))

(defun quire--others ()
  "The people other than you."
  (seq-remove (lambda (person) (eq (plist-get person :self) t)) (quire--people)))

(defun quire--read-person (prompt)
  "Read the name of one of the others with PROMPT.
When there is only one other person, no question is asked."
  (let ((names (mapcar (lambda (person) (plist-get person :name)) (quire--others))))
    (cond ((null names) (user-error "Quire: nobody else is here"))
          ((null (cdr names)) (car names))
          (t (completing-read prompt names nil t)))))

(defun quire--person (name)
  "The other person called NAME, or an error saying who is here."
  (let ((others (quire--others)))
    (or (seq-find (lambda (person) (equal (plist-get person :name) name)) others)
        (user-error "Quire: %s is not here (here: %s)" name
                    (string-join (mapcar (lambda (person) (plist-get person :name)) others) ", ")))))

(defun quire--go-to (place)
  "Put point at PLACE in the selected window; return whether it got there.
In the buffer sharing its document, else its file visited by path (which
joins the document: `quire--join-if-shared', or `quire-share' of that
document when the file is in no project), else the document opened by name."
  (let* ((uri (plist-get place :uri))
         (path (and (stringp (plist-get place :path)) (plist-get place :path)))
         (buffer (or (quire--buffer-of uri) (and path (find-buffer-visiting path)))))
    (cond (buffer (let ((window (get-buffer-window buffer)))
                    (if window (select-window window) (switch-to-buffer buffer))))
          (path (find-file path))
          (t (switch-to-buffer (generate-new-buffer uri))))
    (unless quire--state (quire-share uri))
    (when (equal (plist-get quire--state :uri) uri)
      (goto-char (or (quire--point place) (point-max)))
      t)))

(defun quire-jump (name)
  "Go to the cursor of the person called NAME, visiting its file if needed."
  (interactive (list (quire--read-person "Jump to: ")))
  (let ((person (quire--person name)))
    (when (quire--go-to (aref (plist-get person :at) 0))
      (message "Quire: at %s's cursor, %s" name (quire--place-words (aref (plist-get person :at) 0))))))

(defvar quire--following nil "The name of the person followed, or nil.")
(defvar quire--follow-place nil "Where they were last seen: (URI LINE CHARACTER).")
(defvar quire--follow-at nil "A marker where following last put point (it moves with the text).")
(defvar quire--follow-timer nil "The check of where they are, every 0.3 seconds while following.")
(defvar quire--going-to nil "Non-nil while following moves the window.")

(defun quire--follow-to (place)
  "Move the selected window to PLACE, as following does."
  (unless quire--going-to
    (setq quire--follow-place (list (plist-get place :uri) (plist-get place :line) (plist-get place :character)))
    (let ((quire--going-to t))
      (when (quire--go-to place)
        (setq quire--follow-at (copy-marker (point)))))))

(defun quire-follow (name)
  "Follow the person called NAME: your window goes where their cursor goes.
Across files, as their cursor moves, until you move point yourself or
\\[quire-unfollow].  Their cursor notifications move it at once; a check of
`quire/who' every 0.3 seconds follows them into files not visited here."
  (interactive (list (quire--read-person "Follow: ")))
  (let ((person (quire--person name)))
    (quire--stop-following nil)
    (setq quire--following name)
    (quire--follow-to (aref (plist-get person :at) 0))
    (setq quire--follow-timer (run-at-time 0.3 0.3 #'quire--follow-tick))
    (add-hook 'post-command-hook #'quire--follower-moved)
    (message "Quire: following %s (move, or M-x quire-unfollow, to stop)" name)))

(defun quire-unfollow ()
  "Stop following."
  (interactive)
  (if quire--following (quire--stop-following "as asked") (message "Quire: not following anyone")))

(defun quire--stop-following (why)
  "Stop following; say so with WHY unless it is nil."
  (let ((name quire--following))
    (setq quire--following nil quire--follow-place nil quire--follow-at nil)
    (when quire--follow-timer (cancel-timer quire--follow-timer) (setq quire--follow-timer nil))
    (remove-hook 'post-command-hook #'quire--follower-moved)
    (when (and name why) (message "Quire: stopped following %s (%s)" name why))))

(defun quire--follower-moved ()
  "End the follow when point left where following put it: you moved."
  (when (and quire--following (not quire--going-to) (markerp quire--follow-at)
             (not (and (eq (window-buffer (selected-window)) (marker-buffer quire--follow-at))
                       (= (window-point (selected-window)) quire--follow-at))))
    (quire--stop-following "you moved")))

(defun quire--follow-tick ()
  "Where the followed person is now, which may be a file not visited here."
  (when (and quire--following (not quire--going-to))
    (quire--follower-moved)
    (when (and quire--following quire--connection (jsonrpc-running-p quire--connection))
      (let ((found (seq-find (lambda (person) (equal (plist-get person :name) quire--following))
                             (ignore-errors (quire--others)))))
        (if (not found)
            (quire--stop-following (format "%s left" quire--following))
          (let ((place (aref (plist-get found :at) 0)))
            (unless (equal (list (plist-get place :uri) (plist-get place :line) (plist-get place :character))
                           quire--follow-place)
              (quire--follow-to place))))))))

(defun quire--follow-cursor (params)
  "Their cursor moved (notification PARAMS) in a document shown here: follow it.
Moved from a timer, outside the daemon's process filter."
  (when (and quire--following
             (equal (plist-get (plist-get params :user) :name) quire--following)
             (> (length (plist-get params :selections)) 0)
             (quire--buffer-of (plist-get params :uri)))
    (let* ((selections (plist-get params :selections))
           (at (plist-get (aref selections (1- (length selections))) :end))
           (place (list :uri (plist-get params :uri) :line (plist-get at :line) :character (plist-get at :character))))
      (run-at-time 0 nil (lambda ()
                           (quire--follower-moved)
                           (when quire--following (quire--follow-to place)))))))

(provide 'quire)

;;; quire.el ends here
