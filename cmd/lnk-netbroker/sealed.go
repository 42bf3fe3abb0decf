package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/sealedgrant"
	"lnk.dev/lnk/internal/wire"
)

var (
	sealedNames string // --sealed
	keysFD      int    // --keys-fd
)

// sealedOptions is --sealed's names with the keybroker's channel at
// --keys-fd; nil without names.
func sealedOptions() (*netbroker.SealedOptions, error) {
	if sealedNames == "" {
		if keysFD != 0 {
			return nil, errors.New("--keys-fd without --sealed")
		}
		return nil, nil
	}
	if keysFD < 3 {
		return nil, errors.New("--sealed needs the keybroker's channel at --keys-fd")
	}
	typ, err := unix.GetsockoptInt(keysFD, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_SEQPACKET {
		return nil, fmt.Errorf("--keys-fd %d is no SOCK_SEQPACKET socket", keysFD)
	}
	w, err := wire.NewClient(os.NewFile(uintptr(keysFD), "keybroker"))
	if err != nil {
		return nil, fmt.Errorf("the keybroker's channel: %w", err)
	}
	return &netbroker.SealedOptions{Names: strings.Split(sealedNames, ","), Source: sealedgrant.NewNetClient(w)}, nil
}
