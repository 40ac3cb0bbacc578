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
