package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/stream"
)

// lnk key new|seal|open: sealed streams (helpers/keybroker/stream) for
// tests and for moves. seal and open read stdin and write stdout.

func init() {
	register("key", func() *cobra.Command {
		var out string
		c := &cobra.Command{
			Use:   "new --out FILE",
			Short: "Make a receiver's key pair: the private key to FILE (600, new), the public key printed",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if out == "" {
					return Usage("--out is needed: the private key goes to a new file, never to the terminal")
				}
				pub, priv, err := stream.NewKeyPair()
				if err != nil {
					return err
				}
				text, err := priv.Text()
				if err != nil {
					return err
				}
				defer text.Destroy()
				fd, err := unix.Open(out, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
				if err != nil {
					return Fail(ExitFailure, fmt.Errorf("making %s: %w", out, err), "name a file that doesn't exist yet")
				}
				f := os.NewFile(uintptr(fd), out)
				if _, err := f.Write(append(text.Bytes(), '\n')); err != nil {
					f.Close()
					return err
				}
				if err := f.Sync(); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
				fmt.Fprintln(c.OutOrStdout(), pub.String())
				return nil
			},
		}
		c.Flags().StringVar(&out, "out", "", "the file to write the private key to")
		return c
	})
	register("key", func() *cobra.Command {
		var to string
		c := &cobra.Command{
			Use:   "seal --to PUBKEY",
			Short: "Seal stdin to a receiver's public key, writing the sealed stream to stdout",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				pub, err := stream.ParsePublicKey(to)
				if err != nil {
					return Usage(err.Error(), "lnk key new --out FILE makes a key pair and prints its public key")
				}
				out := bufio.NewWriterSize(c.OutOrStdout(), 1<<20)
				w, err := stream.NewWriter(out, pub)
				if err != nil {
					return err
				}
				if _, err := io.Copy(w, c.InOrStdin()); err != nil {
					return fmt.Errorf("sealing: %w", err)
				}
				if err := w.Close(); err != nil {
					return err
				}
				return out.Flush()
			},
		}
		c.Flags().StringVar(&to, "to", "", "the receiver's public key (lnk-stream-pub-…)")
		return c
	})
	register("key", func() *cobra.Command {
		var keyFile string
		c := &cobra.Command{
			Use:   "open --key FILE",
			Short: "Open a sealed stream on stdin with the private key in FILE, writing it to stdout",
			Long: "Open a sealed stream. Each record is written only after it authenticated, but the output is whole only when lnk exits 0:\n" +
				"a stream cut short, changed, or with data after its end exits 3, and what was written must not be used.",
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if keyFile == "" {
					return Usage("--key is needed: the file lnk key new wrote")
				}
				priv, err := readStreamKey(keyFile)
				if err != nil {
					return err
				}
				r, err := stream.NewReader(bufio.NewReaderSize(c.InOrStdin(), 1<<20), priv)
				if err != nil {
					return streamErr(err)
				}
				out := bufio.NewWriterSize(c.OutOrStdout(), 1<<20)
				if _, err := r.WriteTo(out); err != nil {
					out.Flush()
					return streamErr(err)
				}
				return out.Flush()
			},
		}
		c.Flags().StringVar(&keyFile, "key", "", "the private key's file")
		return c
	})
}

// readStreamKey reads a private key file, never through a link, refusing
// one others may read.
func readStreamKey(path string) (*stream.PrivateKey, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, Fail(ExitMissing, fmt.Errorf("opening the key %s: %w", path, err))
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 {
		return nil, Refused(fmt.Errorf("the key %s is not a regular file of mode 600", path), "chmod 600 "+path)
	}
	buf := make([]byte, 256)
	defer clear(buf)
	n, _ := io.ReadFull(f, buf)
	priv, err := stream.ParsePrivateKey(buf[:n])
	if err != nil {
		return nil, Usage(err.Error())
	}
	return priv, nil
}

// streamErr makes a stream's refusal exit 3.
func streamErr(err error) error {
	for _, r := range []error{stream.ErrFormat, stream.ErrWrongRecipient, stream.ErrDamaged, stream.ErrTruncated, stream.ErrTrailing} {
		if errors.Is(err, r) {
			return Refused(err, "nothing written to stdout may be used")
		}
	}
	return err
}
