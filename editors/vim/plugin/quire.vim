vim9script
# Quire: collaborative editing through the quire daemon. See :help quire.

if exists('g:loaded_quire')
  finish
endif
g:loaded_quire = 1

command! -nargs=? QuireShare quire#Share(<q-args>)
command! -nargs=? QuireListen quire#Listen(<q-args>)
command! -nargs=+ QuireConnect quire#Connect(<q-args>)
command! -nargs=1 QuireConnectCommand quire#ConnectCommand(<q-args>)
command! -nargs=+ QuireConnectRelay quire#ConnectRelay(<q-args>)
command! -nargs=1 -complete=customlist,quire#CompleteDocuments QuireOpen quire#Open(<q-args>)
command! -nargs=? QuireDisconnect quire#Disconnect(<q-args>)
command! -nargs=1 -complete=customlist,quire#CompleteDocuments QuireMerge quire#Merge(<q-args>)
command! QuireStatus quire#Status()
command! QuireResync quire#Resync(bufnr())
command! QuireSave quire#Save(bufnr())
command! QuireStop quire#Stop()
command! QuireWho quire#Who()
command! -nargs=? -complete=customlist,quire#CompletePeople QuireJump quire#Jump(<q-args>)
command! -nargs=? -complete=customlist,quire#CompletePeople QuireFollow quire#Follow(<q-args>)
command! QuireUnfollow quire#Unfollow()

# Opening a file of a shared or joined project joins its document (when a daemon runs).
augroup quire_open
  autocmd!
  autocmd BufReadPost,BufNewFile * quire#Opened(str2nr(expand('<abuf>')))
augroup END
