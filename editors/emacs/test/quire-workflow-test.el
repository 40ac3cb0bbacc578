;;; quire-workflow-test.el --- Emacs commands of a day's programming, with a partner typing  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded after quire-test.el by editors/emacs/test/run.sh, whose helpers it uses.  Each
;; command runs while another editor types a code-like token the buffer has not seen; after
;; each, the buffer is the daemon's text, every token is there once, and nothing was resynced.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'quire)
(require 'align)
(require 'whitespace)
(require 'autorevert)

(defmacro quire-workflow--checked (uri other once &rest body)
  "Run BODY with `agree-once' checking URI against OTHER, tokens ONCE once each.
`agree-once' takes further tokens that must be there once from then on."
  (declare (indent 3))
  `(cl-flet ((agree-once (&rest more)
               (should (quire-test--agree ,other ,uri))
               (should-not quire-test--refused)
               (setq ,once (append ,once more))
               (dolist (token ,once)
                 (should (equal (list token (quire-test--count token (quire--text)) (quire--text))
                                (list token 1 (quire--text)))))
               (should (equal (plist-get quire--state :epoch) 0))))
     ,@body))

(ert-deftest quire-workflow-test-code-editing-commands-while-a-partner-types ()
  "Fill in comments, auto-fill, case words backwards, transposes, rigid indent,
comments, `align-regexp', `whitespace-cleanup', `query-replace-regexp' with a
\\, expression, a keyboard macro over many lines and `yank-pop', each while the
other editor types a token inside or right next to the text it changes."
  (quire-test--with-own-daemon ".workflow"
    (let ((uri "workflow.el") (quire-test--refused nil))
      (emacs-lisp-mode)
      (insert ";; The parser reads <A17> tokens one by one and keeps a stack of open forms so that\n"
              ";; a closing paren f(x) matches \"s\" its opener.\n"
              "(defun parse (x)\n"
              "  (let ((a 1) (bb 22) (ccc 333))\n"
              "    (list a bb ccc)))\n"
              "(setq alpha 1)\n(setq b 2)\n(setq gamma-long 3)\n"
              "trailing here   \n\n\n\nlast <Z9>\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri))
            (once '("<A17>" "f(x)" "\"s\"" "<Z9>")))
        (quire-workflow--checked uri other once
          (unwind-protect
              (progn
                (agree-once)
                ;; M-q in a comment, the partner typing inside the comment.
                (quire-test--while-otto-types other uri "one by one" "<P1> "
                  (goto-char (point-min))
                  (search-forward "stack")
                  (let ((fill-column 40)) (fill-paragraph)))
                (agree-once "<P1>")
                (should (string-prefix-p ";; " (quire-test--line-with "<P1>")))
                (should-not (string-match-p "^[^;(\n tl]" (quire--text)))
                (quire-test--while-otto-types other uri "matches" "<P2> "
                  (goto-char (point-min))
                  (let ((fill-column 90)) (fill-paragraph)))
                (agree-once "<P2>")
                ;; auto-fill-mode while typing a long comment.
                (goto-char (point-min))
                (search-forward "(list a bb ccc)))")
                (insert "\n")
                (auto-fill-mode 1)
                (let ((fill-column 30))
                  (quire-test--while-otto-types other uri "(defun" "<P3>"
                    (quire-test--keys ";; words that go past the fill column <W1> and wrap g(y) again")))
                (auto-fill-mode -1)
                (agree-once "<P3>" "<W1>" "g(y)")
                (should (string-prefix-p ";; " (quire-test--line-with "g(y)")))
                ;; Case words backwards, the partner typing between the words.
                (goto-char (point-min))
                (search-forward "(setq alpha 1)")
                (quire-test--while-otto-types other uri "alpha" "<P4>"
                  (upcase-word -2))
                (agree-once "<P4>")
                (quire-test--while-otto-types other uri "(setq b" "<P5>"
                  (goto-char (point-min))
                  (search-forward "(setq b 2)")
                  (capitalize-word -3))
                (agree-once "<P5>")
                (quire-test--while-otto-types other uri "gamma" "<P6>"
                  (goto-char (point-min))
                  (search-forward "gamma-long")
                  (downcase-word -2))
                (agree-once "<P6>")
                ;; transpose-words and -chars next to where the partner types.
                (quire-test--while-otto-types other uri "bb ccc)" "<P7>"
                  (goto-char (point-min))
                  (search-forward "(list a")
                  (transpose-words 1))
                (agree-once "<P7>")
                (quire-test--while-otto-types other uri "last" "<P8>"
                  (goto-char (point-min))
                  (search-forward "las")
                  (transpose-chars 1))
                (agree-once "<P8>")
                ;; Rigid indentation, comments, alignment, whitespace.
                (quire-test--while-otto-types other uri "(let" "<P9>"
                  (let ((indent-tabs-mode nil))
                    (goto-char (point-min))
                    (search-forward "(defun")
                    (indent-rigidly (line-beginning-position) (line-end-position 3) 3)))
                (agree-once "<P9>")
                (quire-test--while-otto-types other uri "<P5>" "<P10>"
                  (goto-char (point-min))
                  (search-forward "(setq")
                  (comment-region (line-beginning-position) (line-end-position 3)))
                (agree-once "<P10>")
                (quire-test--while-otto-types other uri "<P6>" "<P11>"
                  (goto-char (point-min))
                  (search-forward "(setq")
                  (uncomment-region (line-beginning-position) (line-end-position 3)))
                (agree-once "<P11>")
                (quire-test--while-otto-types other uri "<P4>" "<P12>"
                  (goto-char (point-min))
                  (search-forward "(setq")
                  (align-regexp (line-beginning-position) (line-end-position 3) "\\(\\s-*\\) [0-9]"))
                (agree-once "<P12>")
                (quire-test--while-otto-types other uri "here" "<P13>"
                  (let ((whitespace-style '(trailing empty indentation space-before-tab space-after-tab))
                        (indent-tabs-mode nil))
                    (whitespace-cleanup)))
                (agree-once "<P13>")
                (should-not (string-match-p "[ \t]$" (quire--text)))
                ;; query-replace-regexp with a \, expression, answered `!', by keys.
                (goto-char (point-min))
                (quire-test--while-otto-types other uri "<P9>" "<P14>"
                  (quire-test--keys (vconcat (kbd "C-M-%") "<P\\([0-9]\\)>" (kbd "RET")
                                            "<Q\\,(* 2 (string-to-number \\1))>" (kbd "RET") "!")))
                (setq once (cl-set-difference once '("<P1>" "<P2>" "<P3>" "<P4>" "<P5>" "<P6>" "<P7>" "<P8>" "<P9>")
                                              :test #'equal))
                (agree-once "<P14>" "<Q2>" "<Q4>" "<Q6>" "<Q8>" "<Q10>" "<Q12>" "<Q14>" "<Q16>" "<Q18>")
                ;; A keyboard macro over 200 lines, the partner typing in line 120.
                (goto-char (point-max))
                (insert (mapconcat (lambda (i) (format "row %03d <R%d> \"r\"\n" i i)) (number-sequence 1 200) ""))
                (agree-once "<R1>" "<R120>" "<R200>")
                (goto-char (point-max))
                (forward-line -200)
                (quire-test--while-otto-types other uri "<R120>" "<P15>"
                  (let ((buffer (current-buffer)))
                    (save-window-excursion
                      (switch-to-buffer buffer)
                      (execute-kbd-macro (kbd "C-a ( M-u C-e ) C-n") 200))
                    (set-buffer buffer)))
                ;; 600 edits, one per key: a debug daemon on a busy machine takes a while.
                (quire-test--wait (lambda () (equal (quire-test--text-of other uri) (quire--text))) 60)
                (agree-once "<P15>")
                (should (equal (quire-test--line-with "<R1>") "(ROW 001 <R1> \"r\")"))
                (should (string-match-p "^(ROW 120 <P15><R120> \"r\")$" (quire--text)))
                ;; Kill twice, yank and M-y, the partner typing where the yank goes.
                (goto-char (point-min))
                (kill-new "first <K1>")
                (kill-new "second <K2>\n")
                (goto-char (point-max))
                (insert "tail <T1>\n")
                (agree-once "<T1>")
                (quire-test--while-otto-types other uri "<T1>" "<P16>"
                  (goto-char (point-max))
                  (quire-test--keys (kbd "C-y M-y")))
                (agree-once "<P16>" "<K1>")
                (should (string-suffix-p "tail <P16><T1>\nfirst <K1>" (quire--text)))
                (should-not (string-match-p "<K2>" (quire--text))))
            (jsonrpc-shutdown other)))))))

(ert-deftest quire-workflow-test-undo-with-a-region-after-a-partner-edit ()
  "`undo' with an active region (`undo-in-region' in plain Emacs) after the
partner typed inside the region: only this editor's last step goes, the
partner's text stays, once, for both."
  (quire-test--with-own-daemon ".undo-region"
    (let ((uri "undo-region.el") (quire-test--refused nil))
      (transient-mark-mode 1)
      (insert "one <A1>\ntwo <B2>\nthree <C3>\n")
      (quire-share uri)
      (let ((other (quire-test--editor socket uri)) (once '("<A1>" "<B2>" "<C3>")))
        (quire-workflow--checked uri other once
          (unwind-protect
              (progn
                (agree-once)
                (goto-char (point-min))
                (end-of-line)
                (quire-test--keys " mine <M1>")
                (agree-once "<M1>")
                (quire-test--remote-insert other uri "<M1>" "<P1>")
                (should (quire-test--wait (lambda () (string-match-p "<P1><M1>" (quire--text)))))
                (goto-char (point-min))
                (set-mark (point))
                (forward-line 2)
                (activate-mark)
                (quire-test--keys (kbd "C-/"))
                (should (quire-test--wait (lambda () (equal (quire--text) "one <A1><P1>\ntwo <B2>\nthree <C3>\n"))))
                (setq once (remove "<M1>" once))
                (agree-once "<P1>"))
            (jsonrpc-shutdown other)))))))

(defmacro quire-workflow--with-file (suffix uri contents &rest body)
  "Run BODY in a buffer visiting a new file of CONTENTS, shared as URI.
The client uses a daemon of its own (SUFFIX); BODY sees `path' and `other',
an editor typing in URI."
  (declare (indent 3))
  `(quire-test--with-own-daemon ,suffix
     (let ((path (make-temp-file "quire-workflow-" nil ".txt" ,contents)) (quire-test--refused nil))
       (unwind-protect
           (with-current-buffer (find-file-noselect path)
             (quire-share ,uri)
             (let ((other (quire-test--editor socket ,uri)))
               (unwind-protect (progn ,@body)
                 (jsonrpc-shutdown other)
                 (quire-stop)
                 (set-buffer-modified-p nil)
                 (kill-buffer))))
         (ignore-errors (delete-file path))))))

(ert-deftest quire-workflow-test-saving-hooks-and-final-newline-while-a-partner-types ()
  "`delete-trailing-whitespace' in `before-save-hook' and `require-final-newline'
at `save-buffer', the partner typing before and during the save: the file is
the shared text, which has the partner's token once."
  (quire-workflow--with-file ".save-hooks" "save-hooks.el" "alpha <A1>   \nbeta f(x)\t\ngamma \"s\""
    (let ((once '("<A1>" "f(x)" "\"s\"")))
      (quire-workflow--checked "save-hooks.el" other once
        (agree-once)
        (goto-char (point-min))
        (insert "typed <T0>  ")
        (agree-once "<T0>")
        (add-hook 'before-save-hook #'delete-trailing-whitespace nil t)
        (setq-local require-final-newline t)
        (quire-test--while-otto-types other "save-hooks.el" "beta" "<P1> "
          (save-buffer))
        (agree-once "<P1>")
        (should-not (string-match-p "[ \t]$" (quire--text)))
        (should (string-suffix-p "\n" (quire--text)))
        (goto-char (point-max))
        (insert "delta <D4>   ")
        (quire-test--while-otto-types other "save-hooks.el" "gamma" "<P2> "
          (save-buffer))
        (agree-once "<P2>" "<D4>")
        (should (string-suffix-p "delta <D4>\n" (quire--text)))
        ;; The partner's token may have come after the write: saved again, the file has it.
        (save-buffer)
        (agree-once)
        (should (equal (quire-test--file-text path) (quire--text)))
        (should-not (buffer-modified-p))))))

(ert-deftest quire-workflow-test-a-bom-coding-system-keeps-the-bom-out-of-the-text ()
  "`set-buffer-file-coding-system' to utf-8-with-signature, saved with the
partner typing, then the file read again: the file starts with a BOM, the
shared text never holds one, every token is there once."
  (quire-workflow--with-file ".bom" "bom.el" "one <A1> é\ntwo 日本\n"
    (let ((once '("<A1>" "é" "日本")))
      (quire-workflow--checked "bom.el" other once
        (agree-once)
        (set-buffer-file-coding-system 'utf-8-with-signature)
        (quire-test--while-otto-types other "bom.el" "two" "<P1> "
          (save-buffer))
        (agree-once "<P1>")
        (should (string-prefix-p "\ufeff" (quire-test--file-bytes path)))
        (should-not (string-match-p "\ufeff" (quire-test--text-of other "bom.el")))
        (quire-test--while-otto-types other "bom.el" "one" "<P2> "
          (revert-buffer t t))
        (agree-once "<P2>")
        (should-not (string-match-p "\ufeff" (quire-test--text-of other "bom.el")))))))

(ert-deftest quire-workflow-test-auto-revert-merges-an-outside-rewrite-once ()
  "`auto-revert-mode' and a file rewritten outside (a formatter, `git checkout')
while the partner types: the rewrite arrives once, the partner's token stays."
  (quire-workflow--with-file ".auto-revert" "auto-revert.el" "one <A1>\ntwo f(x)\nthree \"s\"\n"
    (let ((once '("<A1>" "f(x)" "\"s\"")))
      (quire-workflow--checked "auto-revert.el" other once
        (agree-once)
        (setq-local auto-revert-use-notify nil)
        (auto-revert-mode 1)
        (with-temp-file path (insert "one <A1>\ntwo f(x)\ninserted <O1>\nthree \"s\"\n"))
        (set-file-times path (time-add (current-time) 100))
        (quire-test--while-otto-types other "auto-revert.el" "three" "<P1> "
          (auto-revert-handler))
        (should (quire-test--wait (lambda () (string-match-p "<O1>" (quire--text)))))
        (agree-once "<P1>" "<O1>")
        (should quire-mode)
        (goto-char (point-max))
        (insert "after <T1>\n")
        (agree-once "<T1>")
        (auto-revert-mode -1)))))

;; `vc-revert' is bound in a function: the test binds what it asks with.
(declare-function vc-revert "vc")

(ert-deftest quire-workflow-test-vc-revert-brings-the-committed-text-once ()
  "`vc-revert' of a file in git, with this editor's unsaved line and the partner's
token in the document: the buffer is saved, the file goes back to the commit,
and the shared text becomes the commit's with what the partner typed during
the revert, once."
  (quire-test--with-own-daemon ".vc-revert"
    (let* ((repository (make-temp-file "quire-vc-" t))
           (path (expand-file-name "code.txt" repository))
           (default-directory (file-name-as-directory repository))
           (quire-test--refused nil))
      (unwind-protect
          (progn
            (with-temp-file path (insert "one <A1>\ntwo f(x)\nthree \"s\"\n"))
            (dolist (command '(("init" "-q") ("add" "code.txt")
                               ("-c" "user.name=t" "-c" "user.email=t@t" "commit" "-q" "-m" "one")))
              (should (zerop (apply #'call-process "git" nil nil nil command))))
            (with-temp-file path (insert "one <A1>\nsaved <S1>\ntwo f(x)\nthree \"s\"\n"))
            (with-current-buffer (find-file-noselect path)
              (quire-share "code.txt")
              (let ((other (quire-test--editor socket "code.txt"))
                    (once '("<A1>" "f(x)" "\"s\"" "<S1>")))
                (quire-workflow--checked "code.txt" other once
                  (unwind-protect
                      (progn
                        (agree-once)
                        (goto-char (point-max))
                        (insert "unsaved <U1>\n")
                        (agree-once "<U1>")
                        (quire-test--remote-insert other "code.txt" "three" "<P1> ")
                        (should (quire-test--wait (lambda () (string-match-p "<P1>" (quire--text)))))
                        (quire-test--while-otto-types other "code.txt" "two" "<P2> "
                          (cl-letf (((symbol-function 'yes-or-no-p) (lambda (&rest _) t))
                                    ((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
                            ;; From the file's window, as a person runs it (the diff it shows is
                            ;; another window's).
                            (let ((buffer (current-buffer)))
                              (save-window-excursion (switch-to-buffer buffer) (vc-revert))
                              (set-buffer buffer))))
                        (should (equal (quire-test--file-text path) "one <A1>\ntwo f(x)\nthree \"s\"\n"))
                        ;; `vc-revert' saved the buffer first (with <U1> and <P1>), then put the
                        ;; commit in the file: everything since the commit is gone, as asked, and
                        ;; what the partner typed during the revert stays.
                        (setq once (cl-set-difference once '("<S1>" "<U1>") :test #'equal))
                        (agree-once "<P2>")
                        (should (equal (quire--text) "one <A1>\n<P2> two f(x)\nthree \"s\"\n"))
                        (should quire-mode))
                    (jsonrpc-shutdown other)
                    (quire-stop)
                    (set-buffer-modified-p nil)
                    (kill-buffer))))))
        (delete-directory repository t)))))

(ert-deftest quire-workflow-test-a-file-deleted-outside-is-written-again-with-everything ()
  "The shared file deleted outside Emacs (a partner's `git rm', a clean), the
partner typing meanwhile: `save-buffer' writes the file again with the shared
text, and typing goes on reaching the daemon."
  (quire-workflow--with-file ".deleted" "deleted.el" "one <A1>\ntwo f(x)\n"
    (let ((once '("<A1>" "f(x)")))
      (quire-workflow--checked "deleted.el" other once
        (agree-once)
        (delete-file path)
        (quire-test--while-otto-types other "deleted.el" "two" "<P1> "
          (goto-char (point-max))
          (insert "typed <T1>\n"))
        (agree-once "<P1>" "<T1>")
        (cl-letf (((symbol-function 'yes-or-no-p) (lambda (&rest _) t))
                  ((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
          (save-buffer))
        (agree-once)
        (should (equal (quire-test--file-text path) (quire--text)))
        (quire-test--remote-insert other "deleted.el" "one" "<P2> ")
        (agree-once "<P2>")
        (quire-save)
        (should (quire-test--wait (lambda () (equal (quire-test--file-text path) (quire--text)))))))))

(ert-deftest quire-workflow-test-recovering-an-auto-save-after-a-crash-keeps-the-partners-text ()
  "The daemon dies (`kill -9'), the person types offline and Emacs auto-saves,
then Emacs dies before saving (its buffer gone, the auto-save file left).  The
daemon starts again and the partner types.  Visiting the file again, sharing
it and `recover-this-file': what was typed offline reaches the document once,
and the partner's token stays, once."
  (quire-test--with-own-daemon ".crash"
    (let* ((path (make-temp-file "quire-crash-" nil ".txt" "one <A1>\ntwo f(x)\n"))
           (uri "crash.el") (saved nil) (quire-test--refused nil))
      (unwind-protect
          (progn
            (with-current-buffer (find-file-noselect path)
              (quire-share uri)
              (should (quire-test--wait (lambda () (equal (quire-test--daemon-text-at binary socket uri) "one <A1>\ntwo f(x)\n"))))
              (signal-process daemon 'SIGKILL)
              (quire-test--await-daemon-gone daemon socket)
              (auto-save-mode 1)   ; off in batch Emacs
              (goto-char (point-max))
              (insert "offline <O1>\n")
              (do-auto-save t t)
              (should (file-exists-p buffer-auto-save-file-name))
              ;; Emacs killed: the buffer goes, its auto-save file stays.
              (setq saved (cons buffer-auto-save-file-name (quire-test--file-bytes buffer-auto-save-file-name)))
              (quire-mode -1)
              (setq quire--state nil)
              (set-buffer-modified-p nil)
              (let ((kill-buffer-query-functions nil)) (kill-buffer)))
            (quire-stop)
            (setq quire--stopping nil)
            (let ((coding-system-for-write 'utf-8-unix)) (with-temp-file (car saved) (insert (cdr saved))))
            (set-file-times (car saved) (time-add (current-time) 100))
            (setq daemon (quire-test--start-daemon socket))
            (let ((other (quire-test--editor socket uri)))
              (unwind-protect
                  (progn
                    (quire-test--remote-insert other uri "two" "<P1> ")
                    (with-current-buffer (find-file-noselect path)
                      (unwind-protect
                          (let ((once '("<A1>" "f(x)" "<P1>")))
                            (quire-share uri)
                            (quire-workflow--checked uri other once
                              (agree-once)
                              (cl-letf (((symbol-function 'yes-or-no-p) (lambda (&rest _) t))
                                        ((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
                                (let ((buffer (current-buffer)))
                                  (save-window-excursion (switch-to-buffer buffer) (recover-this-file))
                                  (set-buffer buffer)))
                              (agree-once "<O1>")
                              (should (equal (quire--text) "one <A1>\n<P1> two f(x)\noffline <O1>\n"))))
                        (quire-stop)
                        (set-buffer-modified-p nil)
                        (kill-buffer))))
                (jsonrpc-shutdown other))))
        (ignore-errors (delete-file path))
        (when saved (ignore-errors (delete-file (car saved))))))))

(provide 'quire-workflow-test)
;;; quire-workflow-test.el ends here
