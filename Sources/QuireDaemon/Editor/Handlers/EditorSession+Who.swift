import QuireProtocol

// Who is here (`quire/who`): the people whose cursors the daemon knows and where each is, for the
// clients' who-is-here list, jump and follow.

extension WhoRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        Result(people: session.daemon.whoIsHere(for: session))
    }
}
