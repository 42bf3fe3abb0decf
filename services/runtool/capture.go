package runtool

// capped keeps the first max bytes written to it and counts the rest:
// a command's output, kept to [tool.run] output.
type capped struct {
	max   int64
	buf   []byte
	total int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.max - int64(len(c.buf)); room > 0 {
		if int64(len(p)) > room {
			c.buf = append(c.buf, p[:room]...)
		} else {
			c.buf = append(c.buf, p...)
		}
	}
	return len(p), nil
}

// cut reports whether more was written than kept.
func (c *capped) cut() bool { return c.total > int64(len(c.buf)) }
