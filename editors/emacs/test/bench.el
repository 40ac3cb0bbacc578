;;; bench.el --- Figures for quire.el, not a test  -*- lexical-binding: t; -*-

;;; Commentary:

;; The cost in Emacs of applying one remote change in a 10,000-line buffer.
;; Run by `editors/emacs/test/run.sh --bench'.

;;; Code:

(require 'quire)

(with-temp-buffer
  (dotimes (i 10000) (insert (format "line %d of a long buffer, with some text on it\n" i)))
  (let ((start (float-time)))
    (dotimes (i 1000)
      (let ((line (% (* i 7919) 10000)))
        (quire--apply-changes
         (vector (list :range (list :start (list :line line :character 5) :end (list :line line :character 5)) :text "x")))))
    (princ (format "apply one remote change in a 10,000-line buffer: %.0f µs\n"
                   (/ (* 1e6 (- (float-time) start)) 1000)))))

;;; bench.el ends here
