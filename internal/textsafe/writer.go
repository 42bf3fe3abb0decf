package textsafe

import "io"

// Writer is an io.Writer that passes what is written through a [Stream]
// to w: for a child's output (a remote's stderr) copied to the owner's
// terminal as it comes. Write reports all of p written when w took its
// cleaned form; Flush ends the stream.
type Writer struct {
	w     io.Writer
	clean Stream
	buf   []byte
}

// NewWriter returns a Writer cleaning into w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write cleans p and writes it to w.
func (c *Writer) Write(p []byte) (int, error) {
	c.buf = c.clean.Write(c.buf[:0], p)
	if _, err := c.w.Write(c.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush ends the stream, writing what it held (a sequence or rune left
// unfinished is dropped).
func (c *Writer) Flush() error {
	c.buf = c.clean.Flush(c.buf[:0])
	_, err := c.w.Write(c.buf)
	return err
}
