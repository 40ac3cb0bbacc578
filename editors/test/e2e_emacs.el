;;; e2e_emacs.el --- End to end, the Emacs side  -*- lexical-binding: t; -*-

;;; Commentary:

;; Joins the document the Vim side shared (through the other daemon), types a script, then
;; waits for quiet and writes the final buffer.  Driven by editors/test/e2e.sh.

;;; Code:

(require 'quire)

(defvar e2e-work (getenv "QUIRE_WORK"))

(defun e2e-wait (predicate timeout)
  "Process input until PREDICATE holds or TIMEOUT seconds pass."
  (let ((deadline (+ (float-time) timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.01))))

(let ((quire-command (list (getenv "QUIRE_BINARY") "attach" (getenv "QUIRE_SOCKET_B"))))
  (e2e-wait (lambda () (file-exists-p (expand-file-name "vim.ready" e2e-work))) 20)
  (quire--connect)
  ;; Wait until the document has reached this daemon, so we join it.
  (e2e-wait (lambda () (seq-find (lambda (d) (equal (plist-get d :uri) "e2e.txt"))
                                 (jsonrpc-request quire--connection :document/list (make-hash-table))))
            20)
  (switch-to-buffer (generate-new-buffer "e2e"))
  (quire-share "e2e.txt")
  (with-temp-file (expand-file-name "emacs.ready" e2e-work) (insert "shared"))
  (dotimes (i 20)
    (goto-char (point-max))
    (insert (format "e%d " i))
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
  ;; Quiet.
  (let ((last (buffer-string)) (still 0))
    (while (< still 1.5)
      (accept-process-output nil 0.1)
      (if (equal (buffer-string) last)
          (setq still (+ still 0.1))
        (setq last (buffer-string) still 0))))
  (let ((text (buffer-string)))
    (with-temp-file (expand-file-name "emacs.result" e2e-work)
      (insert text)))
  (kill-emacs 0))

;;; e2e_emacs.el ends here
