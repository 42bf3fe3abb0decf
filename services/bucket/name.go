package bucket

import (
	"fmt"
	"regexp"
)

// A bucket's name in Link, an S3 bucket's name, a region and an access
// key's parts: each is written into rclone.conf as it is, so each is
// held to characters that file reads back exactly (no space, '#', ';',
// '=' or newline).
var (
	nameRE      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	s3BucketRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	regionRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	keyIDRE     = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	keySecretRE = regexp.MustCompile(`^[A-Za-z0-9/+._~-]{1,256}$`)
)

// CheckName refuses a name Link would not give a bucket: lowercase
// letters, digits and '-', at most 32, starting with a letter or digit.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("bucket name %q: lowercase letters, digits and '-', at most 32, starting with a letter or digit", name)
	}
	return nil
}

// CheckS3Bucket refuses a name S3 would not give a bucket.
func CheckS3Bucket(b string) error {
	if !s3BucketRE.MatchString(b) {
		return fmt.Errorf("S3 bucket %q: 3 to 63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit", b)
	}
	return nil
}

// CheckRegion refuses a region that isn't lowercase letters, digits and
// '-'; an empty one is rclone's default.
func CheckRegion(r string) error {
	if r != "" && !regionRE.MatchString(r) {
		return fmt.Errorf("region %q: lowercase letters, digits and '-', such as us-east-1", r)
	}
	return nil
}

// checkKeys refuses an access key pair of characters no S3 service
// issues (and rclone.conf would not keep as they are). The error never
// holds the secret.
func checkKeys(id string, secretKey []byte) error {
	if !keyIDRE.MatchString(id) {
		return fmt.Errorf("access key id: 1 to 128 letters, digits, '.', '_' and '-'")
	}
	if !keySecretRE.Match(secretKey) {
		return fmt.Errorf("secret access key: 1 to 256 letters, digits and /+._~-")
	}
	return nil
}
