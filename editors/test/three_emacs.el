;;; three_emacs.el --- editors/test/three.sh, Emma in Emacs  -*- lexical-binding: t; -*-

;;; Commentary:

;; Emma on daemon B opens plan.txt by name, types her line once she sees the plan, and waits
;; to see everyone's line and Vera's and Nora's cursors with their names.

;;; Code:

(require 'quire)

(defun three-wait (predicate timeout)
  "Process input until PREDICATE holds or TIMEOUT seconds pass."
  (let ((deadline (+ (float-time) timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.02))))

(defun three-names ()
  "The names of the cursors shown in the buffer."
  (delq nil (mapcar (lambda (o) (let ((s (overlay-get o 'after-string))) (and s (string-trim (substring-no-properties s)))))
                    (overlays-in (point-min) (point-max)))))

(let ((quire-command (list (getenv "QUIRE_BINARY") "attach" (getenv "QUIRE_SOCKET")))
      (quire-user-name "emma")
      (work (getenv "QUIRE_WORK")))
  (quire-open "plan.txt")
  (three-wait (lambda () (string-match-p "The plan" (buffer-string))) 60)
  (goto-char (point-max))
  (insert "from emma\n")
  (three-wait (lambda () (and (string-match-p "from vera" (buffer-string)) (string-match-p "from nora" (buffer-string)))) 60)
  (goto-char (point-min))
  (quire--send-cursor)
  (three-wait (lambda () (and (member "vera" (three-names)) (member "nora" (three-names)))) 60)
  (let ((names (mapconcat #'identity (three-names) "\n")))
    (with-temp-file (expand-file-name "emma.names" work) (insert names)))
  ;; Everyone stays until all have seen the others (leaving clears one's cursor).
  (three-wait (lambda () (seq-every-p (lambda (who) (file-exists-p (expand-file-name (concat who ".names") work)))
                                      '("vera" "emma" "nora")))
              60)
  (let ((deadline (+ (float-time) 1))) (while (< (float-time) deadline) (accept-process-output nil 0.05)))
  (let ((text (buffer-string)) (coding-system-for-write 'utf-8-unix))
    (with-temp-file (expand-file-name "emma.text" work) (insert text)))
  (quire-stop))

;;; three_emacs.el ends here
