package execinterp

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// MaxHead is how much of a program Of reads: the ELF header,
// its program headers and PT_INTERP's path sit in the first page of
// every ordinary program; one that puts them further is given none.
const MaxHead = 4096

// Of is the #! interpreter line's fields, or the ELF
// PT_INTERP path, of a program whose first bytes are head (at most
// MaxHead). The program may be the agent's own: every offset is checked
// against head, nothing is trusted.
func Of(head []byte) (shebang []string, elfInterp string) {
	if bytes.HasPrefix(head, []byte("#!")) {
		line := head[2:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		return strings.Fields(string(line)), ""
	}
	if len(head) < 0x40 || !bytes.HasPrefix(head, []byte("\x7fELF")) {
		return nil, ""
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if head[5] == 2 {
		bo = binary.BigEndian
	}
	var phoff, phentsize, phnum uint64
	is64 := head[4] == 2
	if is64 {
		phoff, phentsize, phnum = bo.Uint64(head[0x20:]), uint64(bo.Uint16(head[0x36:])), uint64(bo.Uint16(head[0x38:]))
	} else {
		phoff, phentsize, phnum = uint64(bo.Uint32(head[0x1c:])), uint64(bo.Uint16(head[0x2a:])), uint64(bo.Uint16(head[0x2c:]))
	}
	if phentsize < 32 || phnum > 256 || phoff > MaxHead {
		return nil, ""
	}
	for i := uint64(0); i < phnum; i++ {
		at := phoff + i*phentsize
		if at+phentsize > uint64(len(head)) {
			return nil, ""
		}
		ph := head[at : at+phentsize]
		if bo.Uint32(ph) != 3 { // PT_INTERP
			continue
		}
		var off, size uint64
		if is64 {
			if len(ph) < 40 {
				return nil, ""
			}
			off, size = bo.Uint64(ph[8:]), bo.Uint64(ph[32:])
		} else {
			off, size = uint64(bo.Uint32(ph[4:])), uint64(bo.Uint32(ph[16:]))
		}
		if size == 0 || size > 256 || off > uint64(len(head)) || off+size > uint64(len(head)) {
			return nil, ""
		}
		p := strings.TrimRight(string(head[off:off+size]), "\x00")
		if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
			return nil, ""
		}
		return nil, p
	}
	return nil, ""
}
