package tablelog_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	tablelogv1 "github.com/tablelog/tablelog/clients/go/gen/tablelog/v1"
	"github.com/tablelog/tablelog/clients/go/tablelog"
)

// authServer answers a few calls, refusing some as an authenticating server would; its
// interceptors write down each call's authorization header.
type authServer struct {
	tablelogv1.UnimplementedTablelogServiceServer
	mu   sync.Mutex
	seen []string
}

func (s *authServer) note(ctx context.Context, method string) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, method[strings.LastIndex(method, "/")+1:]+" "+strings.Join(md.Get("authorization"), ","))
}

func (s *authServer) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

func (s *authServer) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			s.note(ctx, info.FullMethod)
			return handler(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, stream grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			s.note(stream.Context(), info.FullMethod)
			return handler(srv, stream)
		}),
	}
}

func refusedWith(code codes.Code, words, reason string, md map[string]string) error {
	st, err := status.New(code, words).WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: "tablelog.v1", Metadata: md})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

func (s *authServer) GetGame(_ context.Context, req *tablelogv1.GetGameRequest) (*tablelogv1.GetGameResponse, error) {
	if req.GetGameId() == "expired" {
		return nil, refusedWith(codes.Unauthenticated, "the token expired on 2026-11-30", tablelog.ReasonTokenExpired, nil)
	}
	return &tablelogv1.GetGameResponse{Game: &tablelogv1.GameSummary{GameId: req.GetGameId()}}, nil
}

func (s *authServer) RecordMove(context.Context, *tablelogv1.RecordMoveRequest) (*tablelogv1.RecordMoveResponse, error) {
	return nil, refusedWith(codes.PermissionDenied, "A spectator may only look.", tablelog.ReasonRoleForbids,
		map[string]string{"role": "spectator", "rpc": "RecordMove"})
}

func (s *authServer) ReplayGame(_ *tablelogv1.ReplayGameRequest, stream grpc.ServerStreamingServer[tablelogv1.ReplayGameResponse]) error {
	return stream.Send(&tablelogv1.ReplayGameResponse{State: &tablelogv1.StateSnapshot{Revision: 1}})
}

func (s *authServer) WatchGame(req *tablelogv1.WatchGameRequest, stream grpc.ServerStreamingServer[tablelogv1.WatchGameResponse]) error {
	if req.GetGameId() == "anonymous" {
		return refusedWith(codes.Unauthenticated, "no token was given", tablelog.ReasonTokenMissing, nil)
	}
	if err := stream.Send(&tablelogv1.WatchGameResponse{Item: &tablelogv1.WatchGameResponse_Heartbeat{Heartbeat: &tablelogv1.Heartbeat{HeadRevision: 1}}}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// isolate gives the test a scratch HOME and XDG_CONFIG_HOME and no token or CA in the
// environment; it returns the credentials file's path there.
func isolate(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv(tablelog.DataDirEnv, filepath.Join(root, "data"))
	t.Setenv(tablelog.TokenEnv, "")
	t.Setenv(tablelog.CAEnv, "")
	return filepath.Join(root, "config", "tablelog", "credentials.json")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// overBufconn serves an authServer in memory; the connection's target is "passthrough:///bufnet",
// so the credentials file's entry for it is "bufnet".
func overBufconn(t *testing.T, options ...tablelog.Option) (*tablelog.Client, *authServer) {
	t.Helper()
	listener := bufconn.Listen(1 << 20)
	fake := &authServer{}
	server := grpc.NewServer(fake.serverOptions()...)
	tablelogv1.RegisterTablelogServiceServer(server, fake)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return listener.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return tablelog.New(conn, options...), fake
}

// headerSent is the authorization header a client with these options sends on GetGame.
func headerSent(t *testing.T, options ...tablelog.Option) string {
	t.Helper()
	client, fake := overBufconn(t, options...)
	if _, err := client.GetGame(context.Background(), "g1"); err != nil {
		t.Fatal(err)
	}
	calls := fake.calls()
	if len(calls) != 1 {
		t.Fatalf("calls %v", calls)
	}
	return strings.TrimPrefix(calls[0], "GetGame ")
}

func TestTheTokenIsSentOnEveryCallAndStream(t *testing.T) {
	isolate(t)
	client, fake := overBufconn(t, tablelog.WithToken("tl_abc-DEF.123"))
	ctx := context.Background()
	if _, err := client.GetGame(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	for _, err := range client.Replay(ctx, "g1", 1, 1, nil) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range client.Watch(ctx, "g1", tablelog.WatchOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	want := []string{"GetGame Bearer tl_abc-DEF.123", "ReplayGame Bearer tl_abc-DEF.123", "WatchGame Bearer tl_abc-DEF.123"}
	if got := fake.calls(); !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	if client.TokenSource() != "WithToken" {
		t.Errorf("token source %q", client.TokenSource())
	}
}

func TestNoTokenIsSentWhenNoneIsConfigured(t *testing.T) {
	isolate(t)
	if got := headerSent(t); got != "" {
		t.Errorf("authorization %q", got)
	}
}

func TestTokenPrecedence(t *testing.T) {
	file := isolate(t)
	writeFile(t, file, `{"servers": {"bufnet": {"token": "from-file"}, "club.example:443": {"token": "club"}}}`)
	if got := headerSent(t); got != "Bearer from-file" {
		t.Errorf("file only: %q", got)
	}
	t.Setenv(tablelog.TokenEnv, "from-env")
	if got := headerSent(t); got != "Bearer from-env" {
		t.Errorf("env over file: %q", got)
	}
	if got := headerSent(t, tablelog.WithToken("from-option")); got != "Bearer from-option" {
		t.Errorf("option over env: %q", got)
	}
	t.Setenv(tablelog.TokenEnv, "  ")
	if got := headerSent(t); got != "Bearer from-file" {
		t.Errorf("a blank variable counts as unset: %q", got)
	}
	for address, want := range map[string]string{"club.example:443": "club", "dns:///club.example:443": "club", "club.example:444": ""} {
		token, err := tablelog.ResolveToken(address, "")
		got := ""
		if token != nil {
			got = token.Value
			if token.Source != file {
				t.Errorf("%s: source %q", address, token.Source)
			}
		}
		if err != nil || got != want {
			t.Errorf("%s: token %q %v, want %q", address, got, err, want)
		}
	}
}

func TestTheLocalOwnerTokenIsTheLastResortForLoopback(t *testing.T) {
	file := isolate(t)
	ownerToken := filepath.Join(os.Getenv(tablelog.DataDirEnv), tablelog.OwnerTokenFile)
	writeFile(t, ownerToken, "tl_owner\n")
	writeFile(t, file, `{"servers": {"127.0.0.1:50051": {"token": "from-file"}}}`)
	for address, want := range map[string]string{
		"127.0.0.1:50051": "from-file", "127.0.0.1:50052": "tl_owner", "localhost:7": "tl_owner",
		"club.example:50051": "", "bufnet": "",
	} {
		token, err := tablelog.ResolveToken(address, "")
		got := ""
		if token != nil {
			got = token.Value
		}
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", address, got, err, want)
		}
	}
	if token, _ := tablelog.ResolveToken("127.0.0.1:50052", ""); token == nil || token.Source != ownerToken {
		t.Errorf("source %v", token)
	}
	t.Setenv(tablelog.TokenEnv, "from-env")
	if token, _ := tablelog.ResolveToken("127.0.0.1:50052", ""); token == nil || token.Value != "from-env" {
		t.Errorf("env over the owner token: %v", token)
	}
	t.Setenv(tablelog.TokenEnv, "")
	writeFile(t, ownerToken, "")
	if token, err := tablelog.ResolveToken("127.0.0.1:50052", ""); token != nil || err != nil {
		t.Errorf("an empty owner token file: %v %v", token, err)
	}
	if runtime.GOOS == "linux" {
		t.Setenv(tablelog.DataDirEnv, "")
		t.Setenv("XDG_DATA_HOME", "/srv/data")
		if dir, err := tablelog.ServerDataDir(); err != nil || dir != "/srv/data/tablelog" {
			t.Errorf("data dir %q %v", dir, err)
		}
	}
}

func TestCredentialsPathFollowsXDG(t *testing.T) {
	file := isolate(t)
	if path, err := tablelog.CredentialsPath(); err != nil || path != file {
		t.Errorf("with XDG_CONFIG_HOME: %q %v", path, err)
	}
	home := filepath.Join(os.Getenv("HOME"), ".config", "tablelog", "credentials.json")
	for _, xdg := range []string{"", "relative/config"} {
		t.Setenv("XDG_CONFIG_HOME", xdg)
		if path, err := tablelog.CredentialsPath(); err != nil || path != home {
			t.Errorf("XDG_CONFIG_HOME=%q: %q %v", xdg, path, err)
		}
	}
	writeFile(t, home, `{"servers": {"bufnet": {"token": "in-home"}}}`)
	if got := headerSent(t); got != "Bearer in-home" {
		t.Errorf("authorization %q", got)
	}
}

func TestUnusableTokensAndFilesAreRefusedWithTheirSource(t *testing.T) {
	file := isolate(t)
	cases := []struct{ env, file, want string }{
		{env: "two words", want: "the token from $TABLELOG_TOKEN is not a bearer token"},
		{env: "x" + strings.Repeat("y", tablelog.MaxTokenLength), want: "is over 8192 characters"},
		{file: "{not json", want: "is not a credentials file"},
		{file: `{"servers": {"bufnet": {"token": 7}}}`, want: `servers["bufnet"] has no "token" string`},
		{file: `{"tokens": {}}`, want: `has no "servers" object`},
		{file: `{"servers": {"bufnet": {"token": "a\nb"}}}`, want: "the token from " + file + " is not a bearer token"},
		{file: strings.Repeat(" ", 1<<20+1), want: "is over 1048576 bytes"},
	}
	for _, c := range cases {
		t.Setenv(tablelog.TokenEnv, c.env)
		writeFile(t, file, c.file)
		if _, err := tablelog.ResolveToken("bufnet", ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("env %.20q file %.30q: %v, want %q", c.env, c.file, err, c.want)
		}
		if _, err := tablelog.Dial("bufnet", tablelog.WithAllowInsecure()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Dial: %v, want %q", err, c.want)
		}
		// New cannot fail: every call says why instead, and nothing reaches the server.
		client, fake := overBufconn(t)
		if _, err := client.GetGame(context.Background(), "g1"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("GetGame: %v", err)
		}
		for _, err := range client.Replay(context.Background(), "g1", 1, 1, nil) {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Replay: %v", err)
			}
		}
		if calls := fake.calls(); len(calls) != 0 {
			t.Errorf("calls reached the server: %v", calls)
		}
	}
}

func TestDialSendsATokenInPlaintextOnlyToLoopback(t *testing.T) {
	isolate(t)
	for _, address := range []string{"10.1.2.3:50051", "club.example:50051", "dns:///club.example:50051"} {
		if _, err := tablelog.Dial(address, tablelog.WithToken("t")); err == nil || !strings.Contains(err.Error(), "refusing to send a token in plaintext") {
			t.Errorf("%s: %v", address, err)
		}
		for _, options := range [][]tablelog.Option{
			{tablelog.WithToken("t"), tablelog.WithAllowInsecure()},
			{tablelog.WithToken("t"), tablelog.WithTLS(nil)},
			{},
		} {
			client, err := tablelog.Dial(address, options...)
			if err != nil {
				t.Errorf("%s: %v", address, err)
				continue
			}
			_ = client.Close()
		}
	}
	for _, address := range []string{"127.0.0.1:50051", "localhost:1", "[::1]:50051", "unix:///tmp/tablelog.sock"} {
		client, err := tablelog.Dial(address, tablelog.WithToken("t"))
		if err != nil {
			t.Errorf("%s: %v", address, err)
			continue
		}
		_ = client.Close()
	}
}

func TestIsLoopback(t *testing.T) {
	for target, want := range map[string]bool{
		"127.0.0.1:1": true, "127.9.8.7:1": true, "localhost:1": true, "LocalHost:1": true, "a.localhost:1": true,
		"[::1]:1": true, "dns:///localhost:1": true, "unix:/tmp/s": true,
		"10.0.0.1:1": false, "[::2]:1": false, "localhost.example:1": false, "club.example": false,
	} {
		if got := tablelog.IsLoopback(target); got != want {
			t.Errorf("IsLoopback(%q) = %v", target, got)
		}
	}
}

func TestUnauthenticatedCarriesTheReasonTheWordsAndTheTokensSource(t *testing.T) {
	isolate(t)
	client, _ := overBufconn(t, tablelog.WithToken("old"))
	_, err := client.GetGame(context.Background(), "expired")
	var refused *tablelog.Error
	if !errors.As(err, &refused) {
		t.Fatalf("not a *tablelog.Error: %v", err)
	}
	if !errors.Is(err, tablelog.ErrUnauthenticated) || !errors.Is(err, tablelog.ErrTokenExpired) ||
		errors.Is(err, tablelog.ErrPermissionDenied) || errors.Is(err, tablelog.ErrTokenRevoked) {
		t.Errorf("sentinels do not match %v", err)
	}
	if status.Code(err) != codes.Unauthenticated || refused.Message != "the token expired on 2026-11-30" || refused.TokenSource != "WithToken" {
		t.Errorf("code %v message %q source %q", status.Code(err), refused.Message, refused.TokenSource)
	}
	want := "not signed in: the token expired on 2026-11-30 (TOKEN_EXPIRED; the token came from WithToken). " +
		"Ask the club's owner for a new token and keep it with `tablelog login`."
	if refused.Explain() != want {
		t.Errorf("explained as %q", refused.Explain())
	}

	anonymous, _ := overBufconn(t)
	for _, err := range anonymous.Watch(context.Background(), "anonymous", tablelog.WatchOptions{}) {
		if !errors.Is(err, tablelog.ErrTokenMissing) || !errors.As(err, &refused) || refused.TokenSource != "" ||
			refused.Explain() != "not signed in: no token was given (TOKEN_MISSING; no token was sent). "+
				"Give a token with WithToken, $TABLELOG_TOKEN or `tablelog login`." {
			t.Errorf("watch: %v", err)
		}
	}
}

func TestPermissionDeniedCarriesTheRoleAndTheCall(t *testing.T) {
	isolate(t)
	client, _ := overBufconn(t, tablelog.WithToken("t"))
	_, err := client.RecordNotation(context.Background(), "g1", "take w u g", tablelog.Write{ExpectedVersion: 3})
	var refused *tablelog.Error
	if !errors.As(err, &refused) || !errors.Is(err, tablelog.ErrPermissionDenied) || !errors.Is(err, tablelog.ErrRoleForbids) ||
		errors.Is(err, tablelog.ErrUnauthenticated) {
		t.Fatalf("want PERMISSION_DENIED ROLE_FORBIDS, got %v", err)
	}
	if refused.Role() != "spectator" || refused.RPC() != "RecordMove" || refused.TokenSource != "" {
		t.Errorf("role %q rpc %q source %q", refused.Role(), refused.RPC(), refused.TokenSource)
	}
	if got := refused.Explain(); got != "not allowed: A spectator may only look (ROLE_FORBIDS, role spectator, call RecordMove)" {
		t.Errorf("explained as %q", got)
	}
	view := &tablelog.Error{Code: codes.PermissionDenied, Reason: "VIEW_FORBIDDEN", Message: "seat 0 is not yours"}
	if got := view.Explain(); got != "not allowed: seat 0 is not yours (VIEW_FORBIDDEN)" {
		t.Errorf("explained as %q", got)
	}
	bare := &tablelog.Error{Code: codes.Unauthenticated, Message: "who are you?", TokenSource: "$TABLELOG_TOKEN"}
	if got := bare.Explain(); got != "not signed in: who are you? (UNAUTHENTICATED; the token came from $TABLELOG_TOKEN). "+
		"Give a token with WithToken, $TABLELOG_TOKEN or `tablelog login`." {
		t.Errorf("explained as %q", got)
	}
	other := &tablelog.Error{Code: codes.NotFound, Reason: tablelog.ReasonGameNotFound, Message: "no such game"}
	if got := other.Explain(); got != "NOT_FOUND (GAME_NOT_FOUND): no such game" {
		t.Errorf("explained as %q", got)
	}
}

// selfSigned writes a throwaway certificate for localhost and 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile string, cert tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	return certFile, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestTLSWithTheCA(t *testing.T) {
	isolate(t)
	caFile, cert := selfSigned(t)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := &authServer{}
	options := append(fake.serverOptions(), grpc.Creds(credentials.NewServerTLSFromCert(&cert)))
	server := grpc.NewServer(options...)
	tablelogv1.RegisterTablelogServiceServer(server, fake)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	address := "localhost:" + strings.Split(listener.Addr().String(), ":")[1]
	ctx := context.Background()

	client, err := tablelog.Dial(address, tablelog.WithCA(caFile), tablelog.WithToken("tls-token"))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if game, err := client.GetGame(ctx, "g1"); err != nil || game.GetGameId() != "g1" {
		t.Fatalf("GetGame over TLS: %v %v", game, err)
	}
	_, err = client.RecordNotation(ctx, "g1", "take w u g", tablelog.Write{ExpectedVersion: 1})
	if !errors.Is(err, tablelog.ErrRoleForbids) {
		t.Errorf("the refusal's details did not cross TLS: %v", err)
	}
	if got := fake.calls(); !slices.Equal(got, []string{"GetGame Bearer tls-token", "RecordMove Bearer tls-token"}) {
		t.Errorf("calls %v", got)
	}

	t.Setenv(tablelog.CAEnv, caFile)
	fromEnv, err := tablelog.Dial(address)
	if err != nil {
		t.Fatal(err)
	}
	defer fromEnv.Close()
	if _, err := fromEnv.GetGame(ctx, "g1"); err != nil {
		t.Errorf("CA from $TABLELOG_CA: %v", err)
	}
	t.Setenv(tablelog.CAEnv, "")

	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for name, options := range map[string][]tablelog.Option{
		"the system roots": {tablelog.WithTLS(nil)},
		"plaintext":        {},
	} {
		untrusted, err := tablelog.Dial(address, options...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := untrusted.GetGame(short, "g1"); status.Code(err) != codes.Unavailable {
			t.Errorf("%s: want UNAVAILABLE, got %v", name, err)
		}
		_ = untrusted.Close()
	}
	if _, err := tablelog.Dial(address, tablelog.WithCA(filepath.Join(t.TempDir(), "missing.pem"))); err == nil || !strings.Contains(err.Error(), "cannot read the CA file") {
		t.Errorf("a missing CA file: %v", err)
	}
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	writeFile(t, notPEM, "not a certificate")
	if _, err := tablelog.Dial(address, tablelog.WithCA(notPEM)); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Errorf("a CA file without a certificate: %v", err)
	}
}
