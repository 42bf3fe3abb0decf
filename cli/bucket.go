package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/bucket"
)

// lnk agent bucket add|list|remove AGENT [NAME] and lnk bucket push|pull
// AGENT: thin wrappers over services/bucket. Keys and the encryption
// password come from the terminal with echo off, or from stdin; never
// from a flag, never printed.

func init() {
	register("agent", func() *cobra.Command {
		return &cobra.Command{Use: "bucket", Short: "An agent's buckets: S3 stores its files folder and backups are pushed to, encrypted where you say",
			Args: cobra.NoArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	})
	register("agent bucket", func() *cobra.Command {
		var endpoint, s3Bucket, region string
		var encrypt, askPassword, privateHost bool
		c := &cobra.Command{
			Use:   "add AGENT NAME --s3 URL --bucket B [--region R] [--encrypt [--ask-password]] [--private-host]",
			Short: "Give AGENT bucket NAME; its access key pair is read from the terminal (echo off) or stdin, one a line",
			Long: "Give AGENT a bucket NAME in an S3-compatible store, kept in its Config/rclone.conf (600), which none of its sandboxes reaches.\n" +
				"The access key id and secret key are typed at the terminal with echo off, or piped on stdin, one a line; never given as flags.\n" +
				"With --encrypt, what is pushed is encrypted (rclone crypt) with a password of 32 random bytes, or one asked with --ask-password\n" +
				"(the third line on stdin), kept obscured as rclone keeps it, which isn't encryption: Config/rclone.conf is as secret as the keys.\n" +
				"The endpoint is https://, or http:// only to 127.0.0.1 or [::1]. What is pushed goes under the agent's ID in the S3 bucket.\n" +
				"Its name must resolve to public addresses at each push and pull; with --private-host, to your own network's too (private,\n" +
				"CGNAT, link-local; never loopback, this machine's own or metadata), kept in ~/.lnk, never in the agent's folder nor carried by a move.",
			Example: "  printf '%s\\n%s\\n' \"$KEY_ID\" \"$SECRET\" | lnk agent bucket add helper backup --s3 https://s3.eu-west-1.amazonaws.com --bucket my-backups --region eu-west-1 --encrypt",
			Args:    cobra.ExactArgs(2),
			RunE: func(c *cobra.Command, args []string) error {
				if endpoint == "" || s3Bucket == "" {
					return Usage("--s3 and --bucket are needed", "lnk agent bucket add "+args[0]+" "+args[1]+" --s3 https://HOST --bucket B")
				}
				if askPassword && !encrypt {
					return Usage("--ask-password is the encryption password, and without --encrypt nothing is encrypted", "lnk agent bucket add "+args[0]+" "+args[1]+" --s3 URL --bucket B --encrypt --ask-password")
				}
				if err := bucket.CheckName(args[1]); err != nil {
					return Usage(err.Error(), "lnk agent bucket add "+args[0]+" NAME, NAME such as backup or eu-1")
				}
				if _, err := bucket.CheckEndpoint(endpoint); err != nil {
					return auditRefusal("agent bucket add", args[0], Refused(err, hintOf(err)))
				}
				if err := bucket.CheckS3Bucket(s3Bucket); err != nil {
					return Usage(err.Error())
				}
				if err := bucket.CheckRegion(region); err != nil {
					return Usage(err.Error())
				}
				a, err := loadBucketAgent(args[0])
				if err != nil {
					return err
				}
				keys, err := readBucketKeys(os.Stdin, c.ErrOrStderr(), askPassword)
				if err != nil {
					return Usage(err.Error(), "type them when asked, or pipe them one a line: printf '%s\\n%s\\n' \"$KEY_ID\" \"$SECRET\" | lnk agent bucket add "+args[0]+" "+args[1]+" …")
				}
				defer keys.destroy()
				b, err := a.Add(c.Context(), bucket.New{Name: args[1], Endpoint: endpoint, S3Bucket: s3Bucket, Region: region, Encrypt: encrypt,
					KeyID: keys.id, SecretKey: keys.secret, Password: keys.password, PrivateHost: privateHost})
				if err != nil {
					return auditRefusal("agent bucket add", args[0], bucketErr(err, args[0]))
				}
				fmt.Fprintf(c.OutOrStdout(), "agent %s has bucket %s: %s\n", a.Name, b.Name, describeBucket(b))
				return nil
			},
		}
		c.Flags().StringVar(&endpoint, "s3", "", "the S3 endpoint: https://HOST[:PORT] (http:// only on loopback)")
		c.Flags().StringVar(&s3Bucket, "bucket", "", "the S3 bucket's name")
		c.Flags().StringVar(&region, "region", "", "the S3 region (rclone's default when none)")
		c.Flags().BoolVar(&encrypt, "encrypt", false, "encrypt what is pushed (rclone crypt), with a password of 32 random bytes")
		c.Flags().BoolVar(&askPassword, "ask-password", false, "with --encrypt, ask for the password (echo off; the third line on stdin)")
		c.Flags().BoolVar(&privateHost, "private-host", false, "the endpoint's name may resolve to your own network (private, CGNAT, link-local): your store at home or work")
		return c
	})
	register("agent bucket", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "list AGENT",
			Short: "List AGENT's buckets: endpoint, S3 bucket, folder, encrypted; never a key or the password",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				a, err := loadBucketAgent(args[0])
				if err != nil {
					return err
				}
				l, err := a.List()
				if err != nil {
					return bucketErr(err, args[0])
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), l)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tENDPOINT\tBUCKET\tFOLDER\tENCRYPTED\tPRIVATE HOST")
				for _, b := range l {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", b.Name, b.Endpoint, b.S3Bucket, b.Folder, yesNo(b.Encrypted, "yes", "no"), yesNo(b.PrivateHost, "yes", "no"))
				}
				return tw.Flush()
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
	register("agent bucket", func() *cobra.Command {
		return &cobra.Command{
			Use:   "remove AGENT NAME",
			Short: "Take bucket NAME from AGENT, with its keys and password; what was pushed stays in the S3 bucket",
			Args:  cobra.ExactArgs(2),
			RunE: func(c *cobra.Command, args []string) error {
				a, err := loadBucketAgent(args[0])
				if err != nil {
					return err
				}
				if err := a.Remove(args[1]); err != nil {
					return bucketErr(err, args[0])
				}
				fmt.Fprintf(c.OutOrStdout(), "agent %s no longer has bucket %s (what was pushed there stays)\n", a.Name, args[1])
				return nil
			},
		}
	})
}

// loadBucketAgent is agent name's buckets, its errors as agentErr says
// them.
func loadBucketAgent(name string) (*bucket.Agent, error) {
	a, err := bucket.LoadAgent(os.Getenv("HOME"), name)
	if err != nil {
		return nil, agentErr(err, name)
	}
	return a, nil
}

// bucketErr gives services/bucket's errors their exit code and hint.
func bucketErr(err error, agent string) error {
	switch {
	case errors.Is(err, bucket.ErrNoBucket):
		return Fail(ExitMissing, err, "lnk agent bucket list "+agent+" lists its buckets")
	case errors.Is(err, bucket.ErrNoRclone):
		return Fail(ExitFailure, err, "scripts/install-deps.sh, or apt-get install rclone")
	case errors.Is(err, bucket.ErrConf):
		return Fail(ExitFailure, err, "lnk agent bucket remove "+agent+" NAME, then add it again, writes it as Link does")
	case errors.Is(err, bucket.ErrNotInBucket):
		return Fail(ExitMissing, err, "lnk bucket push "+agent+" sends the files folder's .lnk-backup to its buckets")
	}
	if h := hintOf(err); h != "" {
		return Refused(err, strings.ReplaceAll(h, "AGENT", agent))
	}
	return err
}

// describeBucket is b on one line, without a secret.
func describeBucket(b bucket.Bucket) string {
	enc := "not encrypted"
	if b.Encrypted {
		enc = "encrypted"
	}
	if b.PrivateHost {
		enc += ", its host may be on your own network (--private-host)"
	}
	return fmt.Sprintf("%s, S3 bucket %s, folder %s, %s", b.Endpoint, b.S3Bucket, b.Folder, enc)
}

// agentBuckets is agent a's buckets for lnk agent show: one line each,
// or why they could not be read.
func agentBuckets(home string, a *caps.Agent) string {
	ba, err := bucket.LoadAgent(home, a.Name)
	if err != nil {
		return "(not read: " + err.Error() + ")"
	}
	l, err := ba.List()
	if err != nil {
		return "(not read: " + err.Error() + ")"
	}
	if len(l) == 0 {
		return "-"
	}
	var s []string
	for _, b := range l {
		s = append(s, b.Name+" ("+describeBucket(b)+")")
	}
	return strings.Join(s, "\n         ")
}
