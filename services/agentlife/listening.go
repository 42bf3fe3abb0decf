package agentlife

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// tcpListen is the state /proc/net/tcp{,6} gives a listening socket.
const tcpListen = "0A"

// maxProcNetLines bounds what parseListening reads of one table.
const maxProcNetLines = 1 << 20

// parseListening returns the ports listed as listening in a
// /proc/net/tcp or tcp6 table on an address that takes connections to
// this machine's loopback: 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104, or
// the wildcard 0.0.0.0 or ::. A line it can't read is an error: what
// listens must be known before a start goes ahead.
func parseListening(r io.Reader) (map[int]bool, error) {
	ports := map[int]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for n := 0; sc.Scan(); n++ {
		if n == 0 {
			continue // the header
		}
		if n > maxProcNetLines {
			return nil, errors.New("more sockets than Link reads")
		}
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			return nil, fmt.Errorf("line %d: %d fields", n+1, len(f))
		}
		if f[3] != tcpListen {
			continue
		}
		addr, port, ok := strings.Cut(f[1], ":")
		if !ok {
			return nil, fmt.Errorf("line %d: local address %q", n+1, f[1])
		}
		p, err := strconv.ParseUint(port, 16, 16)
		if err != nil {
			return nil, fmt.Errorf("line %d: port %q", n+1, port)
		}
		ip, err := procAddr(addr)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		ip = ip.Unmap()
		if ip.IsLoopback() || ip.IsUnspecified() {
			ports[int(p)] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return ports, nil
}

// procAddr reads /proc/net's address: 8 or 32 hex digits, each 32-bit
// word in the machine's own byte order.
func procAddr(s string) (netip.Addr, error) {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.Addr{}, fmt.Errorf("address %q", s)
	}
	out := make([]byte, len(b))
	for i := 0; i < len(b); i += 4 {
		binary.BigEndian.PutUint32(out[i:], binary.NativeEndian.Uint32(b[i:]))
	}
	ip, _ := netip.AddrFromSlice(out)
	return ip, nil
}

// listeningOnLoopback reads this network namespace's TCP tables. A
// machine without IPv6 has no tcp6 table; any other failure is an error.
func listeningOnLoopback() (map[int]bool, error) {
	all := map[int]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if errors.Is(err, os.ErrNotExist) && table == "/proc/net/tcp6" {
			continue
		}
		if err != nil {
			return nil, err
		}
		ports, err := parseListening(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", table, err)
		}
		for p := range ports {
			all[p] = true
		}
	}
	return all, nil
}
