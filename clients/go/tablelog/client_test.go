package tablelog_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	tablelogv1 "github.com/tablelog/tablelog/clients/go/gen/tablelog/v1"
	"github.com/tablelog/tablelog/clients/go/tablelog"
)

// fakeServer answers just enough of the API to exercise the wrapper; it has no rules.
type fakeServer struct {
	tablelogv1.UnimplementedTablelogServiceServer
	headers      metadata.MD
	lastRecord   *tablelogv1.RecordMoveRequest
	amends       []string
	watchStopped chan struct{}
	// flaky: the first WatchGame ends UNAVAILABLE after one update; watchFrom records
	// each WatchGame's from_revision.
	flaky     bool
	watchFrom []uint64
}

func refusal(code codes.Code, reason string, md map[string]string) error {
	st, err := status.New(code, "refused by the rules").WithDetails(&errdetails.ErrorInfo{
		Reason: reason, Domain: "tablelog.v1", Metadata: md,
	})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

func (f *fakeServer) CreateGame(ctx context.Context, req *tablelogv1.CreateGameRequest) (*tablelogv1.CreateGameResponse, error) {
	f.headers, _ = metadata.FromIncomingContext(ctx)
	if req.GetRequestId() == "" || req.GetMode() != tablelogv1.Mode_MODE_TABLE || len(req.GetPlayers()) != 2 {
		return nil, status.Error(codes.InvalidArgument, "bad create request")
	}
	return &tablelogv1.CreateGameResponse{Game: &tablelogv1.GameSummary{GameId: "g1", Version: 1}}, nil
}

func (f *fakeServer) RecordMove(_ context.Context, req *tablelogv1.RecordMoveRequest) (*tablelogv1.RecordMoveResponse, error) {
	f.lastRecord = req
	if req.GetExpectedVersion() != 16 {
		return nil, refusal(codes.FailedPrecondition, tablelog.ReasonStaleVersion, map[string]string{"current_version": "16"})
	}
	if req.GetNotation() == "take u u" {
		return nil, refusal(codes.FailedPrecondition, tablelog.ReasonIllegalMove, map[string]string{"rule": "TAKE_TWO_NEEDS_FOUR"})
	}
	return &tablelogv1.RecordMoveResponse{Game: &tablelogv1.GameSummary{Version: 17}}, nil
}

func (f *fakeServer) ListLegalMoves(_ context.Context, req *tablelogv1.ListLegalMovesRequest) (*tablelogv1.ListLegalMovesResponse, error) {
	if req.GetPageToken() == "" {
		return &tablelogv1.ListLegalMovesResponse{Moves: []*tablelogv1.LegalMove{{Notation: "take w u g"}}, NextPageToken: "p2", TotalSize: 2}, nil
	}
	return &tablelogv1.ListLegalMovesResponse{Moves: []*tablelogv1.LegalMove{{Notation: "buy 1.1"}}, TotalSize: 2,
		ToMove: &tablelogv1.ToMove{Who: &tablelogv1.ToMove_Seat{Seat: 0}}}, nil
}

func (f *fakeServer) ReplayGame(req *tablelogv1.ReplayGameRequest, stream grpc.ServerStreamingServer[tablelogv1.ReplayGameResponse]) error {
	if req.GetViewer().GetSpectator() != true {
		return status.Error(codes.InvalidArgument, "expected the spectator by default")
	}
	for revision := req.GetFromRevision(); revision <= req.GetToRevision(); revision++ {
		if err := stream.Send(&tablelogv1.ReplayGameResponse{
			Event: &tablelogv1.Event{Revision: revision},
			State: &tablelogv1.StateSnapshot{Revision: revision},
		}); err != nil {
			return err
		}
	}
	return nil
}

func moveUpdate(sequence, revision uint64, notation string) *tablelogv1.WatchGameResponse {
	return &tablelogv1.WatchGameResponse{Item: &tablelogv1.WatchGameResponse_Update{Update: &tablelogv1.ReplayGameResponse{
		Event: &tablelogv1.Event{Sequence: sequence, Revision: revision, Body: &tablelogv1.Event_MoveRecorded{MoveRecorded: &tablelogv1.MoveRecorded{Notation: notation}}},
		State: &tablelogv1.StateSnapshot{Revision: revision},
	}}}
}

func (f *fakeServer) WatchGame(req *tablelogv1.WatchGameRequest, stream grpc.ServerStreamingServer[tablelogv1.WatchGameResponse]) error {
	if f.flaky {
		f.watchFrom = append(f.watchFrom, req.GetFromRevision())
		if len(f.watchFrom) == 1 {
			_ = stream.Send(moveUpdate(5, 9, "take w u g"))
			return status.Error(codes.Unavailable, "the server is restarting")
		}
		_ = stream.Send(moveUpdate(5, 9, "take w u g")) // the backlog from revision 9 again
		_ = stream.Send(moveUpdate(6, 10, "reserve 1.1"))
		<-stream.Context().Done()
		return nil
	}
	defer close(f.watchStopped)
	_ = stream.Send(&tablelogv1.WatchGameResponse{Item: &tablelogv1.WatchGameResponse_Heartbeat{
		Heartbeat: &tablelogv1.Heartbeat{HeadRevision: req.GetFromRevision()}}})
	_ = stream.Send(&tablelogv1.WatchGameResponse{Item: &tablelogv1.WatchGameResponse_Update{Update: &tablelogv1.ReplayGameResponse{
		Event: &tablelogv1.Event{Revision: 9, Body: &tablelogv1.Event_MoveRecorded{MoveRecorded: &tablelogv1.MoveRecorded{Notation: "take w u g"}}},
		State: &tablelogv1.StateSnapshot{Revision: 9},
	}}})
	<-stream.Context().Done() // follows the game until the client goes away
	return nil
}

func (f *fakeServer) GetAuditLog(_ context.Context, req *tablelogv1.GetAuditLogRequest) (*tablelogv1.GetAuditLogResponse, error) {
	if req.GetPageToken() == "" {
		return &tablelogv1.GetAuditLogResponse{Entries: []*tablelogv1.AuditEntry{{Summary: "created"}}, NextPageToken: "x"}, nil
	}
	return &tablelogv1.GetAuditLogResponse{Entries: []*tablelogv1.AuditEntry{{Summary: "recorded", Undone: true}}}, nil
}

func (f *fakeServer) GetGame(context.Context, *tablelogv1.GetGameRequest) (*tablelogv1.GetGameResponse, error) {
	return nil, status.Error(codes.NotFound, "no such game")
}

func (f *fakeServer) AmendMove(_ context.Context, req *tablelogv1.AmendMoveRequest) (*tablelogv1.AmendMoveResponse, error) {
	if req.GetRequestId() == "" || req.GetExpectedVersion() != 24 {
		return nil, status.Error(codes.InvalidArgument, "bad amend request")
	}
	switch change := req.GetChange().(type) {
	case *tablelogv1.AmendMoveRequest_ReplaceMove:
		if change.ReplaceMove.GetNotation() == "take r g k" {
			return nil, refusal(codes.FailedPrecondition, tablelog.ReasonAmendBreaksLaterMove,
				map[string]string{"revision": "23", "notation": "buy 1.1"})
		}
		f.amends = append(f.amends, fmt.Sprintf("replace %d %s", req.GetRevision(), change.ReplaceMove.GetNotation()))
	case *tablelogv1.AmendMoveRequest_InsertMove:
		move := change.InsertMove
		f.amends = append(f.amends, fmt.Sprintf("insert %d typed=%v seat=%d", req.GetRevision(), move.GetMove() != nil, move.GetSeat()))
	case *tablelogv1.AmendMoveRequest_DeleteMove:
		f.amends = append(f.amends, fmt.Sprintf("delete %d drop_tail=%v reason=%s", req.GetRevision(), req.GetDropTail(), req.GetReason()))
	}
	return &tablelogv1.AmendMoveResponse{Game: &tablelogv1.GameSummary{Version: 25}}, nil
}

// fakeClubs answers the club calls as a club of one owner would.
type fakeClubs struct {
	tablelogv1.UnimplementedClubServiceServer
	authorization []string
	calls         []string
}

func (f *fakeClubs) WhoAmI(ctx context.Context, _ *tablelogv1.WhoAmIRequest) (*tablelogv1.WhoAmIResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.authorization = md.Get("authorization")
	return &tablelogv1.WhoAmIResponse{
		Member: &tablelogv1.Member{MemberId: "m1", DisplayName: "rita", Role: tablelogv1.Role_ROLE_RECORDER},
		Club:   &tablelogv1.Club{ClubId: "c1", Name: "local"},
	}, nil
}

func (f *fakeClubs) AddMember(_ context.Context, req *tablelogv1.AddMemberRequest) (*tablelogv1.AddMemberResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("add %s %s", req.GetDisplayName(), req.GetRole()))
	return &tablelogv1.AddMemberResponse{Member: &tablelogv1.Member{MemberId: "m2", DisplayName: req.GetDisplayName(), Role: req.GetRole()}}, nil
}

func (f *fakeClubs) CreateToken(_ context.Context, req *tablelogv1.CreateTokenRequest) (*tablelogv1.CreateTokenResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("token %s %d", req.GetMemberId(), req.GetExpiresInSeconds()))
	return &tablelogv1.CreateTokenResponse{Token: "tl_new", Info: &tablelogv1.TokenInfo{TokenId: "t1", MemberId: req.GetMemberId()}}, nil
}

func (f *fakeClubs) ListTokens(_ context.Context, req *tablelogv1.ListTokensRequest) (*tablelogv1.ListTokensResponse, error) {
	f.calls = append(f.calls, "tokens "+req.GetMemberId())
	return &tablelogv1.ListTokensResponse{Tokens: []*tablelogv1.TokenInfo{{TokenId: "t1", LastChars: "_new"}}}, nil
}

func (f *fakeClubs) RevokeToken(_ context.Context, req *tablelogv1.RevokeTokenRequest) (*tablelogv1.RevokeTokenResponse, error) {
	f.calls = append(f.calls, "revoke "+req.GetTokenId())
	return &tablelogv1.RevokeTokenResponse{Token: &tablelogv1.TokenInfo{TokenId: req.GetTokenId(), Revoked: true}}, nil
}

func (f *fakeClubs) SetRole(_ context.Context, req *tablelogv1.SetRoleRequest) (*tablelogv1.SetRoleResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("role %s %s", req.GetMemberId(), req.GetRole()))
	return &tablelogv1.SetRoleResponse{Member: &tablelogv1.Member{MemberId: req.GetMemberId(), Role: req.GetRole()}}, nil
}

func (f *fakeClubs) RemoveMember(_ context.Context, req *tablelogv1.RemoveMemberRequest) (*tablelogv1.RemoveMemberResponse, error) {
	f.calls = append(f.calls, "remove "+req.GetMemberId())
	return &tablelogv1.RemoveMemberResponse{TokensRevoked: 1}, nil
}

func (f *fakeClubs) ListMembers(context.Context, *tablelogv1.ListMembersRequest) (*tablelogv1.ListMembersResponse, error) {
	return &tablelogv1.ListMembersResponse{Members: []*tablelogv1.Member{{MemberId: "m1"}, {MemberId: "m2"}}}, nil
}

func start(t *testing.T, options ...tablelog.Option) (*tablelog.Client, *fakeServer) {
	client, fake, _ := startWithClubs(t, options...)
	return client, fake
}

func startWithClubs(t *testing.T, options ...tablelog.Option) (*tablelog.Client, *fakeServer, *fakeClubs) {
	t.Helper()
	listener := bufconn.Listen(1 << 20)
	server := grpc.NewServer()
	fake := &fakeServer{watchStopped: make(chan struct{})}
	tablelogv1.RegisterTablelogServiceServer(server, fake)
	clubs := &fakeClubs{}
	tablelogv1.RegisterClubServiceServer(server, clubs)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return listener.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	options = append([]tablelog.Option{tablelog.WithToken("tl_ada")}, options...)
	return tablelog.New(conn, options...), fake, clubs
}

func TestCreateGameSendsIdentityAndTableMode(t *testing.T) {
	client, fake := start(t)
	game, err := client.CreateGame(context.Background(), tablelog.NewGame{Game: "splendor", Players: []string{"ada", "bo"}})
	if err != nil {
		t.Fatal(err)
	}
	if game.GetVersion() != 1 {
		t.Errorf("version %d", game.GetVersion())
	}
	// Who records is the token's member, never a name the client claims.
	if got := fake.headers.Get("authorization"); !slices.Equal(got, []string{"Bearer tl_ada"}) {
		t.Errorf("authorization header %v", got)
	}
	if got := fake.headers.Get("x-tablelog-client"); len(got) != 1 || got[0] != tablelog.ClientName {
		t.Errorf("client header %v", got)
	}
}

func TestErrorsCarryTheReason(t *testing.T) {
	client, fake := start(t)
	ctx := context.Background()

	_, err := client.RecordNotation(ctx, "g1", "take w r k", tablelog.Write{ExpectedVersion: 15})
	if !errors.Is(err, tablelog.ErrStaleVersion) || errors.Is(err, tablelog.ErrIllegalMove) {
		t.Fatalf("want STALE_VERSION, got %v", err)
	}
	var refused *tablelog.Error
	if !errors.As(err, &refused) {
		t.Fatalf("not a *tablelog.Error: %T", err)
	}
	if current, ok := refused.CurrentVersion(); !ok || current != 16 {
		t.Errorf("current version %d %v", current, ok)
	}
	if refused.Code != codes.FailedPrecondition || status.Code(err) != codes.FailedPrecondition {
		t.Errorf("code %v", refused.Code)
	}
	if refused.Domain != "tablelog.v1" || refused.Message != "refused by the rules" {
		t.Errorf("domain %q message %q", refused.Domain, refused.Message)
	}
	if fake.lastRecord.GetRequestId() == "" {
		t.Error("no request id was sent")
	}

	_, err = client.RecordNotation(ctx, "g1", "take u u", tablelog.Write{ExpectedVersion: 16, RequestID: "r-1"})
	if tablelog.Reason(err) != tablelog.ReasonIllegalMove || !errors.As(err, &refused) || refused.Rule() != "TAKE_TWO_NEEDS_FOUR" {
		t.Fatalf("want ILLEGAL_MOVE TAKE_TWO_NEEDS_FOUR, got %v", err)
	}
	if fake.lastRecord.GetRequestId() != "r-1" {
		t.Errorf("request id %q", fake.lastRecord.GetRequestId())
	}

	_, err = client.GetGame(ctx, "nope")
	if tablelog.Reason(err) != "" || status.Code(err) != codes.NotFound {
		t.Fatalf("want a bare NOT_FOUND, got %v", err)
	}
}

func TestRecordTypedMove(t *testing.T) {
	client, fake := start(t)
	move := &tablelogv1.Move{Game: &tablelogv1.Move_Splendor{Splendor: &tablelogv1.SplendorMove{
		Action: &tablelogv1.SplendorMove_TakeSame{TakeSame: &tablelogv1.SplendorTakeSame{Gem: tablelogv1.SplendorGem_SPLENDOR_GEM_RED}}},
	}}
	resp, err := client.RecordMove(context.Background(), "g1", move, tablelog.Write{ExpectedVersion: 16})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetGame().GetVersion() != 17 || fake.lastRecord.GetMove().GetSplendor().GetTakeSame().GetGem() != tablelogv1.SplendorGem_SPLENDOR_GEM_RED {
		t.Errorf("typed move not carried: %v", fake.lastRecord)
	}
}

func TestPagesAreCollected(t *testing.T) {
	client, _ := start(t)
	legal, err := client.LegalMoves(context.Background(), "g1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var notations []string
	for _, move := range legal.Moves {
		notations = append(notations, move.GetNotation())
	}
	if !slices.Equal(notations, []string{"take w u g", "buy 1.1"}) || legal.TotalSize != 2 || tablelog.DescribeToMove(legal.ToMove) != "seat:0" {
		t.Errorf("legal moves %v %d %v", notations, legal.TotalSize, legal.ToMove)
	}
	entries, err := client.Audit(context.Background(), "g1")
	if err != nil || len(entries) != 2 || !entries[1].GetUndone() {
		t.Errorf("audit %v %v", entries, err)
	}
}

func TestReplayIsARangeOverFunc(t *testing.T) {
	client, _ := start(t)
	var revisions []uint64
	for item, err := range client.Replay(context.Background(), "g1", 2, 4, nil) {
		if err != nil {
			t.Fatal(err)
		}
		revisions = append(revisions, item.GetState().GetRevision())
	}
	if !slices.Equal(revisions, []uint64{2, 3, 4}) {
		t.Errorf("revisions %v", revisions)
	}
}

func TestWatchStopsWhenTheLoopDoes(t *testing.T) {
	client, fake := start(t)
	var seen []string
	for item, err := range client.Watch(context.Background(), "g1", tablelog.WatchOptions{From: 8}) {
		if err != nil {
			t.Fatal(err)
		}
		if item.IsHeartbeat() {
			seen = append(seen, "heartbeat")
			continue
		}
		seen = append(seen, item.Event.GetMoveRecorded().GetNotation())
		break
	}
	if !slices.Equal(seen, []string{"heartbeat", "take w u g"}) {
		t.Errorf("seen %v", seen)
	}
	select {
	case <-fake.watchStopped:
	case <-time.After(5 * time.Second):
		t.Error("the server's stream was not cancelled")
	}
}

func TestWatchResumesFromTheLastRevisionSeen(t *testing.T) {
	client, fake := start(t)
	fake.flaky = true
	var seen []string
	for item, err := range client.Watch(context.Background(), "g1", tablelog.WatchOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, item.Event.GetMoveRecorded().GetNotation())
		if len(seen) == 2 {
			break
		}
	}
	if !slices.Equal(seen, []string{"take w u g", "reserve 1.1"}) {
		t.Errorf("seen %v (each event once, across the restart)", seen)
	}
	if !slices.Equal(fake.watchFrom, []uint64{0, 9}) {
		t.Errorf("watched from %v", fake.watchFrom)
	}
}

func TestWatchEndsQuietlyWithItsContext(t *testing.T) {
	client, _ := start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items := 0
	for _, err := range client.Watch(ctx, "g1", tablelog.WatchOptions{}) {
		if err != nil {
			t.Fatalf("a cancelled watch reported %v", err)
		}
		items++
		cancel()
	}
	if items == 0 {
		t.Error("nothing was watched")
	}
}

func TestDescribeToMoveAndViewers(t *testing.T) {
	cases := map[string]*tablelogv1.ToMove{
		"seat:2":      {Who: &tablelogv1.ToMove_Seat{Seat: 2}},
		"chance":      {Who: &tablelogv1.ToMove_Chance{Chance: true}},
		"terminal":    {Who: &tablelogv1.ToMove_Terminal{Terminal: true}},
		"unspecified": nil,
	}
	for want, toMove := range cases {
		if got := tablelog.DescribeToMove(toMove); got != want {
			t.Errorf("%v: got %q, want %q", toMove, got, want)
		}
	}
	if tablelog.Seat(1).GetSeat() != 1 || !tablelog.Full.GetFull() || !tablelog.Spectator.GetSpectator() {
		t.Error("viewers")
	}
	if a, b := tablelog.NewRequestID(), tablelog.NewRequestID(); a == b || len(a) != 36 {
		t.Errorf("request ids %q %q", a, b)
	}
}

func TestAmendSendsEachChange(t *testing.T) {
	client, fake := start(t)
	ctx := context.Background()
	w := tablelog.Write{ExpectedVersion: 24}
	if _, err := client.Amend(ctx, "g1", 18, tablelog.Amendment{Kind: tablelog.Replace, Notation: "take u r w"}, w); err != nil {
		t.Fatal(err)
	}
	seat := uint32(1)
	typed := &tablelogv1.Move{Game: &tablelogv1.Move_Splendor{Splendor: &tablelogv1.SplendorMove{}}}
	if _, err := client.Amend(ctx, "g1", 18, tablelog.Amendment{Kind: tablelog.Insert, Move: typed, Seat: &seat}, w); err != nil {
		t.Fatal(err)
	}
	resp, err := client.Amend(ctx, "g1", 19, tablelog.Amendment{Kind: tablelog.Delete, DropTail: true, Reason: "never"}, w)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetGame().GetVersion() != 25 {
		t.Fatalf("version %d", resp.GetGame().GetVersion())
	}
	want := []string{"replace 18 take u r w", "insert 18 typed=true seat=1", "delete 19 drop_tail=true reason=never"}
	if !slices.Equal(fake.amends, want) {
		t.Fatalf("amends %q, want %q", fake.amends, want)
	}
	if _, err := client.Amend(ctx, "g1", 18, tablelog.Amendment{}, w); err == nil {
		t.Fatal("an amendment without a kind was sent")
	}
}

func TestAmendRefusalNamesTheBrokenMove(t *testing.T) {
	client, _ := start(t)
	_, err := client.Amend(context.Background(), "g1", 17,
		tablelog.Amendment{Kind: tablelog.Replace, Notation: "take r g k"}, tablelog.Write{ExpectedVersion: 24})
	if !errors.Is(err, tablelog.ErrAmendBreaksLaterMove) {
		t.Fatalf("want AMEND_BREAKS_LATER_MOVE, got %v", err)
	}
	var e *tablelog.Error
	if !errors.As(err, &e) || e.Metadata["revision"] != "23" {
		t.Fatalf("the refusal does not name revision 23: %v", err)
	}
}

func TestClubCallsCarryTheToken(t *testing.T) {
	client, _, clubs := startWithClubs(t, tablelog.WithToken("tl_test"))
	ctx := context.Background()
	me, err := client.WhoAmI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if me.GetMember().GetDisplayName() != "rita" || me.GetMember().GetRole() != tablelogv1.Role_ROLE_RECORDER {
		t.Fatalf("whoami %v", me)
	}
	if !slices.Equal(clubs.authorization, []string{"Bearer tl_test"}) {
		t.Fatalf("authorization %q", clubs.authorization)
	}
	member, err := client.AddMember(ctx, "sam", tablelogv1.Role_ROLE_SPECTATOR)
	if err != nil || member.GetRole() != tablelogv1.Role_ROLE_SPECTATOR {
		t.Fatalf("add member %v %v", member, err)
	}
	created, err := client.CreateToken(ctx, member.GetMemberId(), time.Minute)
	if err != nil || created.GetToken() != "tl_new" {
		t.Fatalf("create token %v %v", created, err)
	}
	if tokens, err := client.Tokens(ctx, "m2"); err != nil || len(tokens) != 1 || tokens[0].GetLastChars() != "_new" {
		t.Fatalf("tokens %v %v", tokens, err)
	}
	if info, err := client.RevokeToken(ctx, "t1"); err != nil || !info.GetRevoked() {
		t.Fatalf("revoke %v %v", info, err)
	}
	if m, err := client.SetRole(ctx, "m2", tablelogv1.Role_ROLE_PLAYER); err != nil || m.GetRole() != tablelogv1.Role_ROLE_PLAYER {
		t.Fatalf("set role %v %v", m, err)
	}
	if revoked, err := client.RemoveMember(ctx, "m2"); err != nil || revoked != 1 {
		t.Fatalf("remove %d %v", revoked, err)
	}
	if members, err := client.Members(ctx); err != nil || len(members) != 2 {
		t.Fatalf("members %v %v", members, err)
	}
	want := []string{"add sam ROLE_SPECTATOR", "token m2 60", "tokens m2", "revoke t1", "role m2 ROLE_PLAYER", "remove m2"}
	if !slices.Equal(clubs.calls, want) {
		t.Fatalf("calls %q, want %q", clubs.calls, want)
	}
}
