package wire

import "os"

// ReadRecord reads one record from fd, a SOCK_SEQPACKET socket the caller
// keeps, with the same checks a [Server] makes (caps, MSG_TRUNC,
// MSG_CTRUNC, header against fds). It is for a program's first request,
// read before it serves: lnk-fsbroker confines itself to the folders a
// hello carries before a [Server] exists.
func ReadRecord(fd int) (Record, []*os.File, error) {
	return newRawConn(nil, fd).recv()
}

// WriteRecord writes one record with files beside it (they stay the
// caller's) on fd, a SOCK_SEQPACKET socket the caller keeps.
func WriteRecord(fd int, r Record, files []*os.File) error {
	c := &conn{fd: fd}
	return c.send(r, files)
}

// SetState sets the channel's state, as a server that handled its first
// request itself (see [ReadRecord]) does before Serve.
func (s *Server) SetState(st State) { s.state.Store(uint32(st)) }
