package fsbroker

import (
	"errors"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
)

// Refusals only the broker makes (the resolver's are its own sentinels).
var (
	ErrReadOnly = errors.New("the folder was handed over read-only")
	ErrNoRoot   = errors.New("no such folder was handed over")
)

// codes pairs each refusal with the code it travels as.
var codes = []struct {
	code string
	err  error
}{
	{"invalid", resolve.ErrInvalid},
	{"escape", resolve.ErrEscape},
	{"link", resolve.ErrLink},
	{"not-regular", resolve.ErrNotRegular},
	{"not-dir", resolve.ErrNotDir},
	{"too-large", resolve.ErrTooLarge},
	{"not-found", resolve.ErrNotFound},
	{"exists", resolve.ErrExists},
	{"busy", resolve.ErrBusy},
	{"changed", resolve.ErrChanged},
	{"closed", resolve.ErrClosed},
	{"read-only", ErrReadOnly},
	{"no-root", ErrNoRoot},
}

// ToWire turns a refusal into what travels back: its code and message.
func ToWire(err error) error {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return &wire.Error{Code: c.code, Message: err.Error()}
		}
	}
	return err
}

// FromWire turns a code back into its sentinel (nil if unknown).
func FromWire(code string) error {
	for _, c := range codes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}
