;;; e2e_emacs.el --- End to end, the Emacs side  -*- lexical-binding: t; -*-

;;; Commentary:

;; As the first editor it shares a document, as the second it joins it through its own
;; daemon; then it types a script, waits for quiet and writes its final buffer.  Driven by
;; editors/test/e2e.sh with QUIRE_ROLE, QUIRE_SOCKET and QUIRE_MARK.

;;; Code:

(require 'quire)

(defvar e2e-work (getenv "QUIRE_WORK"))
(defvar e2e-role (getenv "QUIRE_ROLE"))
(defvar e2e-mark (getenv "QUIRE_MARK"))
(defvar e2e-other-role (if (equal e2e-role "first") "second" "first"))

(defun e2e-wait (predicate timeout)
  "Process input until PREDICATE holds or TIMEOUT seconds pass."
  (let ((deadline (+ (float-time) timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.01))))

(let ((quire-command (list (getenv "QUIRE_BINARY") "attach" (getenv "QUIRE_SOCKET"))))
  (switch-to-buffer (generate-new-buffer "e2e"))
  (if (equal e2e-role "first")
      (progn
        (insert "The quick brown fox\njumps over the lazy dog.\n")
        (quire-share "e2e.txt"))
    (e2e-wait (lambda () (file-exists-p (expand-file-name "first.ready" e2e-work))) 20)
    (quire--connect)
    ;; Wait until the document has reached this daemon, so we join it.
    (e2e-wait (lambda () (seq-find (lambda (d) (equal (plist-get d :uri) "e2e.txt"))
                                   (jsonrpc-request quire--connection :document/list (make-hash-table))))
              20)
    (quire-share "e2e.txt"))
  (with-temp-file (expand-file-name (concat e2e-role ".ready") e2e-work) (insert "shared"))
  (e2e-wait (lambda () (file-exists-p (expand-file-name (concat e2e-other-role ".ready") e2e-work))) 20)
  (dotimes (i 20)
    (goto-char (point-max))
    (insert (format "%s%d " e2e-mark i))
    (when (zerop (% i 7)) (insert "ünï😀"))
    (accept-process-output nil 0.015)
    (when (zerop (% i 3))
      (goto-char (point-min))
      (forward-line 1)
      (end-of-line)
      (insert "\n"))
    (accept-process-output nil 0.015)
    (when (and (zerop (% i 4)) (> (buffer-size) 10))
      (goto-char (point-min))
      (forward-line 1)
      (delete-char 1))
    (accept-process-output nil 0.015))
  ;; Join two lines.
  (goto-char (point-min))
  (end-of-line)
  (delete-char 1)
  (accept-process-output nil 0.015)
  ;; Type something and undo it, while the other editor's edits keep arriving.
  (goto-char (point-max))
  (insert "UNDONE")
  (accept-process-output nil 0.05)
  (quire-undo)   ; the daemon's undo, as C-/ in a shared buffer
  (accept-process-output nil 0.015)
  ;; Quiet.
  (let ((last (buffer-string)) (still 0))
    (while (< still 1.5)
      (accept-process-output nil 0.1)
      (if (equal (buffer-string) last)
          (setq still (+ still 0.1))
        (setq last (buffer-string) still 0))))
  (let ((text (buffer-string)))
    (with-temp-file (expand-file-name (concat e2e-role ".emacs.result") e2e-work)
      (insert text)))
  (kill-emacs 0))

;;; e2e_emacs.el ends here
