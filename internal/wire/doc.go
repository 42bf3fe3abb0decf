// Package wire is the record protocol Link's kernel and every broker
// share: one record per SOCK_SEQPACKET message, file descriptors beside it
// in SCM_RIGHTS, a request table as data on the serving side.
//
// # Record format
//
// Every record is one datagram, little-endian:
//
//	off size
//	0   4    length of the whole record, header included; must equal the datagram's length
//	4   1    version, 1
//	5   1    kind: 1 request, 2 reply, 3 error reply
//	6   1    number of fds carried in SCM_RIGHTS; must equal what arrived
//	7   1    zero
//	8   2    request type
//	10  2    zero
//	12  8    request id, chosen by the caller; a reply carries its request's id
//	20  ...  body: one JSON object
//
// A record is at most [MaxRecord] bytes and carries at most [MaxFDs] fds.
// The cap is 128 KiB, not more, so that a record always fits a unix
// socket's default send buffer (net.core.wmem_default) without raising it;
// bulk data (a file's contents) travels in an fd (a memfd or the file
// itself), never in a record.
//
// Bodies are decoded strictly ([Unmarshal]): a field that is not in the
// Go type, a field given twice, a key whose case differs, a missing field
// (one whose json tag lacks omitempty), a null for anything but a
// pointer, slice or map, and trailing data are all errors. A type may
// encode and decode itself ([Encoder], [Decoder]) for a hot request, in
// one exact form; a body it does not recognise is decoded by the rules
// above, so a Decoder makes decoding faster, never looser. JSON was
// chosen over a binary TLV because every broker can declare its requests
// as plain Go structs; at these sizes decoding costs about a microsecond.
//
// # Requests are a table
//
// A server's [Route] list is its request table: type, name, the fds the
// request and its reply carry, flags ([Once]) and the states it is
// permitted in. An unknown type, a type not permitted in the channel's
// state, a second [Once] request, a wrong fd count, a malformed header or
// body, a truncated datagram (MSG_TRUNC) or truncated control data
// (MSG_CTRUNC) all close the channel: every fd that arrived with the
// record is closed and [Server.Serve] returns the reason. A handler's
// error is not a violation: it travels back as an error reply ([Error])
// and the channel stays open. A handler returns its reply's fds as files,
// or hands bare fds with [Request.ReplyFD] (lnk-fsbroker's open does:
// an *os.File made only to send an fd costs a fcntl and, for a
// non-blocking fd, an epoll_ctl); the server closes both once sent.
//
// # One server
//
// [Server] is Link's one record server: every broker and the kernel
// serve through it. [Server.Drain] stops it in order, as the kernel does
// on SIGTERM: the socket is shut for reading; requests the peer had sent
// are still read, checked and answered with the drain's error, never
// served; requests in flight finish and their answers are written, up to
// the drain's bound, past which their context ends and the socket is
// shut both ways.
//
// # Callers
//
// A [Client] may have many calls in flight; replies are matched by id.
// A call returns when its reply arrives, when its context ends, or when
// the channel dies — a dead peer (kill -9) gives every waiting caller
// [ErrClosed], never a hang.
//
// # Security
//
// Records are received through internal/scmrights, Link's one
// SCM_RIGHTS receiver: every fd received is made close-on-exec by the
// kernel (MSG_CMSG_CLOEXEC) before Go sees it, and control data that is
// cut short, over the fd cap or anything but SCM_RIGHTS is refused with
// every fd that came closed. Both sides trust nothing in a
// record: sizes, fd counts and types are checked before any handler
// runs. The package holds no authority of its own; it moves the fds its
// callers hand it and closes every fd it refuses.
//
// Waiting: both sides make blocking sendmsg and recvmsg calls on the
// bare socket, never the runtime's netpoller, so a datagram wakes the
// thread waiting for it directly. Before a reader sleeps it spins for
// up to 50 µs on recvmsg with MSG_DONTWAIT, yielding the CPU between
// tries (spin.go), so a reply or a burst's next request is read without
// a sleep and a wake-up. A [Client] has no reader goroutine:
// the caller that holds the reader's turn reads until its own reply
// comes, handing others' replies to them on the way, so a lone caller
// sends and reads on one thread; a call whose context can end waits in
// poll(2) beside an eventfd its context's end writes. A watcher
// goroutine per client waits in poll(2) for the channel's end only
// (POLLRDHUP), which closes Done and fails the waiting calls even when
// nobody reads. A [Server] reads on one locked thread and serves
// [Inline] requests there (one marked [Server.OneOfMany], as each of the
// kernel's connections is, neither spins nor locks a thread); it yields after starting a handler goroutine
// so the handler runs at once. [Server.Serve] raises a GOMAXPROCS of 1
// to 2 for the whole process: with one P the runtime takes the P from
// the reader blocked in recvmsg and each request pays to get it back. shutdown(2) wakes a waiting reader and
// every blocked sender when the channel closes.
package wire
