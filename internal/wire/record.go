package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

const (
	// HeaderSize is the fixed header before every record's body.
	HeaderSize = 20
	// MaxRecord caps a whole record, header included.
	MaxRecord = 128 << 10
	// MaxFDs caps the fds one record may carry.
	MaxFDs = 64
	// Version is the record format's version.
	Version = 1
)

// Kind says what a record is.
type Kind uint8

const (
	KindInvalid Kind = iota // zero: never valid
	KindRequest
	KindReply
	KindError
)

// Type is a request type; each server's table says what it means.
type Type uint16

// Record is one decoded record. Body aliases the buffer it was parsed
// from unless the caller copies it.
type Record struct {
	Kind Kind
	Type Type
	ID   uint64
	NFD  int
	Body []byte
}

// ErrProtocol is wrapped by every violation of the record format or a
// table's rules; a violation closes the channel.
var ErrProtocol = errors.New("protocol violation")

func violation(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, a...))
}

// AppendRecord appends r's header and body to dst.
func AppendRecord(dst []byte, r Record) ([]byte, error) {
	n := HeaderSize + len(r.Body)
	if n > MaxRecord {
		return dst, fmt.Errorf("record of %d bytes is over the %d-byte cap", n, MaxRecord)
	}
	if r.NFD < 0 || r.NFD > MaxFDs {
		return dst, fmt.Errorf("record carries %d fds, over the cap of %d", r.NFD, MaxFDs)
	}
	if r.Kind < KindRequest || r.Kind > KindError {
		return dst, fmt.Errorf("record kind %d is not a kind", r.Kind)
	}
	var h [HeaderSize]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(n))
	h[4] = Version
	h[5] = byte(r.Kind)
	h[6] = byte(r.NFD)
	binary.LittleEndian.PutUint16(h[8:], uint16(r.Type))
	binary.LittleEndian.PutUint64(h[12:], r.ID)
	dst = append(dst, h[:]...)
	return append(dst, r.Body...), nil
}

// ParseRecord decodes one datagram b that arrived with nfd fds. Every
// mismatch is an [ErrProtocol] error.
func ParseRecord(b []byte, nfd int) (Record, error) {
	if len(b) > MaxRecord {
		return Record{}, violation("record of %d bytes is over the %d-byte cap", len(b), MaxRecord)
	}
	if len(b) < HeaderSize {
		return Record{}, violation("record of %d bytes is shorter than its header", len(b))
	}
	if n := binary.LittleEndian.Uint32(b[0:]); int64(n) != int64(len(b)) {
		return Record{}, violation("record says %d bytes but %d arrived", n, len(b))
	}
	if b[4] != Version {
		return Record{}, violation("record version %d, want %d", b[4], Version)
	}
	k := Kind(b[5])
	if k < KindRequest || k > KindError {
		return Record{}, violation("record kind %d is not a kind", b[5])
	}
	if b[7] != 0 || b[10] != 0 || b[11] != 0 {
		return Record{}, violation("record's reserved bytes are not zero")
	}
	if int(b[6]) != nfd {
		return Record{}, violation("record says %d fds but %d arrived", b[6], nfd)
	}
	if nfd > MaxFDs {
		return Record{}, violation("record carries %d fds, over the cap of %d", nfd, MaxFDs)
	}
	if k == KindError && nfd != 0 {
		return Record{}, violation("an error reply carries %d fds", nfd)
	}
	return Record{
		Kind: k,
		NFD:  nfd,
		Type: Type(binary.LittleEndian.Uint16(b[8:])),
		ID:   binary.LittleEndian.Uint64(b[12:]),
		Body: b[HeaderSize:],
	}, nil
}
