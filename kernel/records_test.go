package kernel_test

import (
	"encoding/binary"

	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// record builds a request record of type typ with body, nfd claimed.
func record(typ wire.Type, body string, nfd int) []byte {
	b, err := wire.AppendRecord(nil, wire.Record{Kind: wire.KindRequest, Type: typ, ID: 1, NFD: nfd, Body: []byte(body)})
	if err != nil {
		panic(err)
	}
	return b
}

func pingRecord() []byte { return record(proto.Ping.Type, "{}", 0) }

// withLength rewrites a record's length field.
func withLength(b []byte, n uint32) []byte {
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(c, n)
	return c
}
