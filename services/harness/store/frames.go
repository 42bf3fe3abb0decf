package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// MaxFrame is the most one frame of events.zst may decompress to (the
// spec's 64 MiB): a frame that says more, or makes more, is refused.
const MaxFrame = 64 << 20

// maxPacked bounds a frame's compressed bytes read before it is decoded:
// a frame of MaxFrame stored raw is that plus its headers.
const maxPacked = MaxFrame + 1<<20

// ErrFrame is wrapped by every refusal of events.zst.
var ErrFrame = errors.New("not a whole zstd frame of Link's")

const zstdMagic = 0xFD2FB528

// frameEnd walks the frame at off in r by its headers alone (no block is
// read or decoded) and returns where it ends. A frame cut short, a
// skippable or reserved one, one that says it decompresses past
// MaxFrame or whose compressed bytes pass maxPacked is refused.
func frameEnd(r io.ReaderAt, off int64) (int64, error) {
	var h [13]byte // the magic number and descriptor, then up to 8 bytes of content size
	if _, err := r.ReadAt(h[:5], off); err != nil {
		return 0, fmt.Errorf("%w: a header cut short at %d", ErrFrame, off)
	}
	if binary.LittleEndian.Uint32(h[:4]) != zstdMagic {
		return 0, fmt.Errorf("%w: no frame at %d", ErrFrame, off)
	}
	fhd := h[4]
	fcsFlag, single, reserved, dictFlag := fhd>>6, fhd>>5&1, fhd>>3&1, fhd&3
	if reserved != 0 {
		return 0, fmt.Errorf("%w: a reserved bit set at %d", ErrFrame, off)
	}
	if dictFlag != 0 {
		return 0, fmt.Errorf("%w: a dictionary's frame at %d", ErrFrame, off)
	}
	pos := off + 5
	if single == 0 {
		pos++ // the window descriptor
	}
	fcsLen := [4]int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && single == 1 {
		fcsLen = 1
	}
	if fcsLen > 0 {
		b := h[5 : 5+fcsLen]
		if _, err := r.ReadAt(b, pos); err != nil {
			return 0, fmt.Errorf("%w: a header cut short at %d", ErrFrame, off)
		}
		var size uint64
		for i := fcsLen - 1; i >= 0; i-- {
			size = size<<8 | uint64(b[i])
		}
		if fcsLen == 2 {
			size += 256
		}
		if size > MaxFrame {
			return 0, fmt.Errorf("%w: the frame at %d says %d bytes, past 64 MiB", ErrFrame, off, size)
		}
		pos += int64(fcsLen)
	}
	for {
		var b [3]byte
		if _, err := r.ReadAt(b[:], pos); err != nil {
			return 0, fmt.Errorf("%w: a block cut short in the frame at %d", ErrFrame, off)
		}
		v := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		last, typ, size := v&1, v>>1&3, int64(v>>3)
		pos += 3
		switch typ {
		case 0, 2: // raw, compressed
			if size > 128<<10 {
				return 0, fmt.Errorf("%w: a block past 128 KiB in the frame at %d", ErrFrame, off)
			}
			pos += size
		case 1: // one byte repeated
			pos++
		default:
			return 0, fmt.Errorf("%w: a reserved block in the frame at %d", ErrFrame, off)
		}
		if pos-off > maxPacked {
			return 0, fmt.Errorf("%w: the frame at %d passes 64 MiB", ErrFrame, off)
		}
		if last == 1 {
			break
		}
	}
	if fhd>>2&1 == 1 {
		pos += 4 // the checksum
	}
	// The frame's last byte must be there: a frame is read only whole.
	if _, err := r.ReadAt(make([]byte, 1), pos-1); err != nil {
		return 0, fmt.Errorf("%w: the frame at %d is cut short", ErrFrame, off)
	}
	return pos, nil
}

var (
	decoderOnce sync.Once
	decoder     *zstd.Decoder
	decoderErr  error
)

// decodeFrame decompresses one whole frame, refusing output past
// MaxFrame.
func decodeFrame(packed []byte) ([]byte, error) {
	decoderOnce.Do(func() {
		decoder, decoderErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(MaxFrame), zstd.WithDecoderMaxWindow(MaxFrame))
	})
	if decoderErr != nil {
		return nil, decoderErr
	}
	out, err := decoder.DecodeAll(packed, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFrame, err)
	}
	if len(out) > MaxFrame {
		return nil, fmt.Errorf("%w: a frame past 64 MiB", ErrFrame)
	}
	return out, nil
}

// eachFrame calls each with every frame of r's first size bytes,
// decompressed, in order.
func eachFrame(r io.ReaderAt, size int64, each func(off int64, lines []byte) error) error {
	for off := int64(0); off < size; {
		end, err := frameEnd(r, off)
		if err != nil {
			return err
		}
		if end > size {
			return fmt.Errorf("%w: the frame at %d runs past the file", ErrFrame, off)
		}
		packed := make([]byte, end-off)
		if _, err := r.ReadAt(packed, off); err != nil {
			return err
		}
		lines, err := decodeFrame(packed)
		if err != nil {
			return fmt.Errorf("the frame at %d: %w", off, err)
		}
		if err := each(off, lines); err != nil {
			return fmt.Errorf("the frame at %d: %w", off, err)
		}
		off = end
	}
	return nil
}
