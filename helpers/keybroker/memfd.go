package keybroker

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// sealedMemfd puts value in a memfd that can never change again (sealed
// against write, grow, shrink and further seals), positioned at its start.
func sealedMemfd(value []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("lnk-sealed-secret", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd for a sealed secret: %w", err)
	}
	f := os.NewFile(uintptr(fd), "sealed-secret")
	if _, err := f.Write(value); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("sealing the memfd: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
