package tablelog

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Environment variables every tablelog client reads.
const (
	// TokenEnv holds the bearer token when no WithToken is given.
	TokenEnv = "TABLELOG_TOKEN"
	// CAEnv names a PEM CA bundle to verify the server with (TLS) when no WithCA is given.
	CAEnv = "TABLELOG_CA"
	// DataDirEnv is the data directory of `tablelog serve`, where it keeps OwnerTokenFile.
	DataDirEnv = "TABLELOG_DATA_DIR"
)

// OwnerTokenFile is where `tablelog serve` writes the local owner's token in its data directory.
const OwnerTokenFile = "owner.token"

// MaxTokenLength is longer than any opaque token or JWT a server issues; a longer one is a mistake.
const MaxTokenLength = 8192

// maxCredentialsFileBytes bounds the credentials file and a CA bundle, both small files.
const maxCredentialsFileBytes = 1 << 20

// bearerToken is RFC 6750's b64token: what may follow "Bearer " in an authorization header.
var bearerToken = regexp.MustCompile(`^[A-Za-z0-9\-._~+/]+=*$`)

// WithToken sets the bearer token sent with every call. Without it the token is $TABLELOG_TOKEN,
// else the server's entry in the credentials file (CredentialsPath); an empty token is not given.
func WithToken(token string) Option { return func(s *settings) { s.token = token } }

// WithCA verifies the server over TLS with the PEM CA bundle in file (default $TABLELOG_CA).
func WithCA(file string) Option { return func(s *settings) { s.ca = file } }

// WithTLS connects over TLS with config (nil: the system's roots), e.g. for a client certificate.
func WithTLS(config *tls.Config) Option {
	return func(s *settings) {
		if config == nil {
			config = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		s.tls = config
	}
}

// WithAllowInsecure lets Dial send the token over plaintext to a server that is not on this
// machine (a private network you trust). Without it a token goes in plaintext only to loopback.
func WithAllowInsecure() Option { return func(s *settings) { s.allowInsecure = true } }

// Token is a bearer token and where it was found, so that a refusal can say which token it was.
type Token struct {
	Value string
	// Source is "WithToken", "$TABLELOG_TOKEN" or the credentials file's path.
	Source string
}

// CredentialsPath is the credentials file every tablelog client shares with the Python CLI
// (`tablelog login` writes it): $XDG_CONFIG_HOME/tablelog/credentials.json, by default
// ~/.config/tablelog/credentials.json, holding {"servers": {"host:port": {"token": "..."}}}.
func CredentialsPath() (string, error) {
	// The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
	if base := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(base) {
		return filepath.Join(base, "tablelog", "credentials.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("tablelog: no credentials file: %w", err)
	}
	return filepath.Join(home, ".config", "tablelog", "credentials.json"), nil
}

// ResolveToken is the token to send to address: explicit, else $TABLELOG_TOKEN, else the
// credentials file's entry for the address's host:port, else, for a loopback address only, the
// local owner's token in the server's data directory (ServerDataDir), as the Python CLI finds
// it; nil when there is none. It fails when the chosen token is malformed or the credentials
// file cannot be read as one.
func ResolveToken(address, explicit string) (*Token, error) {
	if strings.TrimSpace(explicit) != "" {
		return checkToken(explicit, "WithToken")
	}
	if value := os.Getenv(TokenEnv); strings.TrimSpace(value) != "" {
		return checkToken(value, "$"+TokenEnv)
	}
	path, err := CredentialsPath()
	if err != nil {
		return nil, err
	}
	value, found, err := configuredToken(path, serverKey(address))
	if err != nil {
		return nil, err
	}
	if found {
		return checkToken(value, path)
	}
	return localOwnerToken(address)
}

// ServerDataDir is the data directory `tablelog serve` uses by default: $TABLELOG_DATA_DIR,
// else the platform's user data directory for "tablelog" (Python's platformdirs.user_data_dir).
func ServerDataDir() (string, error) {
	if configured := os.Getenv(DataDirEnv); configured != "" {
		return configured, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "tablelog"), nil
	case "windows":
		if local := os.Getenv("LOCALAPPDATA"); local != "" {
			return filepath.Join(local, "tablelog"), nil
		}
		return filepath.Join(home, "AppData", "Local", "tablelog"), nil
	}
	if data := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(data) {
		return filepath.Join(data, "tablelog"), nil
	}
	return filepath.Join(home, ".local", "share", "tablelog"), nil
}

// localOwnerToken is the local owner's token for a server on this machine (nil: none).
func localOwnerToken(address string) (*Token, error) {
	if !IsLoopback(address) {
		return nil, nil
	}
	dir, err := ServerDataDir()
	if err != nil {
		return nil, nil
	}
	path := filepath.Join(dir, OwnerTokenFile)
	data, err := readBounded(path, "owner token file")
	// Missing, or another OS user's server whose token is not ours to read: the server will
	// say that no token came.
	if err != nil || strings.TrimSpace(string(data)) == "" {
		return nil, nil
	}
	return checkToken(string(data), path)
}

func configuredToken(path, server string) (value string, found bool, err error) {
	data, err := readBounded(path, "credentials file")
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var file struct {
		Servers map[string]json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return "", false, fmt.Errorf("tablelog: %s is not a credentials file: %w", path, err)
	}
	if file.Servers == nil {
		return "", false, fmt.Errorf(`tablelog: %s has no "servers" object`, path)
	}
	raw, ok := file.Servers[server]
	if !ok {
		return "", false, nil
	}
	var entry struct {
		Token *string `json:"token"`
	}
	if err := json.Unmarshal(raw, &entry); err != nil || entry.Token == nil {
		return "", false, fmt.Errorf(`tablelog: %s: servers[%q] has no "token" string`, path, server)
	}
	return *entry.Token, true, nil
}

func checkToken(value, source string) (*Token, error) {
	value = strings.TrimSpace(value)
	if len(value) > MaxTokenLength {
		return nil, fmt.Errorf("tablelog: the token from %s is over %d characters", source, MaxTokenLength)
	}
	if !bearerToken.MatchString(value) {
		return nil, fmt.Errorf("tablelog: the token from %s is not a bearer token "+
			"(letters, digits and - . _ ~ + / only, then optional = padding)", source)
	}
	return &Token{Value: value, Source: source}, nil
}

// transportCredentials is TLS when a CA (WithCA or $TABLELOG_CA) or WithTLS is given,
// plaintext otherwise; secure says which.
func transportCredentials(s *settings) (creds credentials.TransportCredentials, secure bool, err error) {
	ca := s.ca
	if ca == "" {
		ca = os.Getenv(CAEnv)
	}
	if ca == "" && s.tls == nil {
		return insecure.NewCredentials(), false, nil
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.tls != nil {
		config = s.tls.Clone()
	}
	if ca != "" {
		pem, err := readBounded(ca, "CA file")
		if err != nil {
			return nil, false, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, false, fmt.Errorf("tablelog: the CA file %s holds no PEM certificate", ca)
		}
		config.RootCAs = pool
	}
	return credentials.NewTLS(config), true, nil
}

// serverKey is the "host:port" a credentials entry is keyed by: a gRPC target without its
// scheme ("dns:///club.example:443" -> "club.example:443").
func serverKey(target string) string {
	if i := strings.Index(target, "://"); i >= 0 {
		rest := target[i+3:]
		if j := strings.Index(rest, "/"); j >= 0 {
			rest = rest[j+1:]
		}
		return rest
	}
	return target
}

// IsLoopback tells whether a gRPC target is on this machine, where plaintext stays local.
func IsLoopback(target string) bool {
	if strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "unix-abstract:") {
		return true
	}
	host := serverKey(target)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func readBounded(path, what string) ([]byte, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tablelog: cannot read the %s: %w", what, err)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxCredentialsFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tablelog: cannot read the %s %s: %w", what, path, err)
	}
	if len(data) > maxCredentialsFileBytes {
		return nil, fmt.Errorf("tablelog: the %s %s is over %d bytes", what, path, maxCredentialsFileBytes)
	}
	return data, nil
}
