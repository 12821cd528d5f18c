// Package tablelog is a thin Go client of the tablelog gRPC API (tablelog.v1).
//
// It carries messages and nothing else: the server parses notation, lists legal moves and
// renders states. Every failed call returns an *Error carrying the server's ErrorInfo reason
// (match it with errors.Is(err, tablelog.ErrStaleVersion) or tablelog.Reason(err)).
package tablelog

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	tablelogv1 "github.com/tablelog/tablelog/clients/go/gen/tablelog/v1"
)

// ClientName is recorded in every event this client appends (actor.client).
const ClientName = "tablelog-go/0.1.0"

// DefaultAddress is where every tablelog client looks when nothing else is said.
const DefaultAddress = "127.0.0.1:50051"

// Client calls one tablelog server. It is safe for concurrent use.
type Client struct {
	// Raw is the generated client, for anything the wrapper does not cover.
	Raw tablelogv1.TablelogServiceClient
	// Clubs is the generated client of the club's members and tokens (ClubService).
	Clubs tablelogv1.ClubServiceClient
	// Standings is the generated client of club memory (StandingsService).
	Standings tablelogv1.StandingsServiceClient
	conn      *grpc.ClientConn
	headers   metadata.MD
	timeout   time.Duration
	// token is the bearer token sent with every call (nil: none).
	token *Token
	// unusable is why New could not use its token: every call returns it.
	unusable error
}

type settings struct {
	client        string
	timeout       time.Duration
	dialOptions   []grpc.DialOption
	token, ca     string
	tls           *tls.Config
	allowInsecure bool
}

// Option configures a Client.
type Option func(*settings)

// WithClientName replaces "tablelog-go/<version>" as actor.client.
func WithClientName(name string) Option { return func(s *settings) { s.client = name } }

// WithTimeout sets the deadline of each unary call whose context has none (default 30 s).
func WithTimeout(timeout time.Duration) Option { return func(s *settings) { s.timeout = timeout } }

// WithDialOptions adds gRPC dial options (interceptors, ...) for Dial; for TLS use WithCA or
// WithTLS, which also tell Dial that a token may be sent.
func WithDialOptions(options ...grpc.DialOption) Option {
	return func(s *settings) { s.dialOptions = append(s.dialOptions, options...) }
}

// Dial connects to a server at address ("" means $TABLELOG_ADDRESS or 127.0.0.1:50051).
// The connection is TLS with WithCA, $TABLELOG_CA or WithTLS, plaintext otherwise. Every call
// carries the token (WithToken, $TABLELOG_TOKEN or the credentials file; see ResolveToken);
// Dial refuses to send one in plaintext to anything but loopback unless WithAllowInsecure.
func Dial(address string, options ...Option) (*Client, error) {
	if address == "" {
		address = os.Getenv("TABLELOG_ADDRESS")
	}
	if address == "" {
		address = DefaultAddress
	}
	s := configure(options)
	token, err := ResolveToken(address, s.token)
	if err != nil {
		return nil, err
	}
	creds, secure, err := transportCredentials(s)
	if err != nil {
		return nil, err
	}
	if token != nil && !secure && !s.allowInsecure && !IsLoopback(address) {
		return nil, fmt.Errorf("tablelog: refusing to send a token in plaintext to %s: give the "+
			"server's CA (WithCA or $%s) to use TLS, or WithAllowInsecure on a network you trust", address, CAEnv)
	}
	dial := append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, s.dialOptions...)
	conn, err := grpc.NewClient(address, dial...)
	if err != nil {
		return nil, fmt.Errorf("tablelog: connect to %s: %w", address, err)
	}
	c := newClient(conn, s, token)
	c.conn = conn
	return c, nil
}

// New wraps an existing connection (which the caller closes and secures). The token is
// resolved as for Dial, the credentials file keyed by the connection's target; when it cannot
// be used (malformed, or an unreadable credentials file) every call returns why.
func New(conn grpc.ClientConnInterface, options ...Option) *Client {
	s := configure(options)
	target := ""
	if named, ok := conn.(interface{ Target() string }); ok {
		target = named.Target()
	}
	token, err := ResolveToken(target, s.token)
	c := newClient(conn, s, token)
	c.unusable = err
	return c
}

func configure(options []Option) *settings {
	s := &settings{client: ClientName, timeout: 30 * time.Second}
	for _, option := range options {
		option(s)
	}
	return s
}

func newClient(conn grpc.ClientConnInterface, s *settings, token *Token) *Client {
	headers := metadata.Pairs("x-tablelog-client", s.client)
	if token != nil {
		headers.Set("authorization", "Bearer "+token.Value)
	}
	return &Client{
		Raw: tablelogv1.NewTablelogServiceClient(conn), Clubs: tablelogv1.NewClubServiceClient(conn),
		Standings: tablelogv1.NewStandingsServiceClient(conn),
		headers:   headers, timeout: s.timeout, token: token,
	}
}

// TokenSource says where the token sent with every call came from ("" when none is sent).
func (c *Client) TokenSource() string {
	if c.token == nil {
		return ""
	}
	return c.token.Source
}

// wrap turns a gRPC error into an *Error that knows which token the client sent.
func (c *Client) wrap(err error) error {
	err = wrap(err)
	var e *Error
	if errors.As(err, &e) && e.Code == codes.Unauthenticated {
		e.TokenSource = c.TokenSource()
	}
	return err
}

// Close closes a connection opened by Dial.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// unaryContext adds the identity headers and the default deadline.
func (c *Client) unaryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx = metadata.NewOutgoingContext(ctx, metadata.Join(c.headers, outgoing(ctx)))
	if _, ok := ctx.Deadline(); ok || c.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

func (c *Client) streamContext(ctx context.Context) context.Context {
	return metadata.NewOutgoingContext(ctx, metadata.Join(c.headers, outgoing(ctx)))
}

func outgoing(ctx context.Context) metadata.MD {
	md, _ := metadata.FromOutgoingContext(ctx)
	return md
}

func unary[Req, Resp any](c *Client, ctx context.Context, call func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	if c.unusable != nil {
		var none Resp
		return none, c.unusable
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	resp, err := call(ctx, req)
	return resp, c.wrap(err)
}

// Viewers of a state.
var (
	// Spectator sees public information only.
	Spectator = &tablelogv1.Viewer{Kind: &tablelogv1.Viewer_Spectator{Spectator: true}}
	// Full sees everything, hidden information included (admins, audit).
	Full = &tablelogv1.Viewer{Kind: &tablelogv1.Viewer_Full{Full: true}}
)

// Seat is the viewer of a player's seat (0-based): their own hidden information is shown.
func Seat(seat uint32) *tablelogv1.Viewer {
	return &tablelogv1.Viewer{Kind: &tablelogv1.Viewer_Seat{Seat: seat}}
}

// NewRequestID returns a random idempotency key (a UUID v4).
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func requestID(id string) string {
	if id == "" {
		return NewRequestID()
	}
	return id
}

// ListGameTypes lists the game types the server knows.
func (c *Client) ListGameTypes(ctx context.Context) ([]*tablelogv1.GameInfo, error) {
	resp, err := unary(c, ctx, c.Raw.ListGameTypes, &tablelogv1.ListGameTypesRequest{})
	return resp.GetGames(), err
}

// NewGame describes a game to create.
type NewGame struct {
	Game    string   // registry name, e.g. "splendor"
	Players []string // names in seat order
	Dealt   bool     // the server deals chance outcomes; default: table mode
	Title   string
	Options *tablelogv1.GameOptions
	// RequestID makes creation idempotent; empty means a fresh one.
	RequestID string
}

// CreateGame creates a game and returns its summary (version 1 and the game id).
func (c *Client) CreateGame(ctx context.Context, game NewGame) (*tablelogv1.GameSummary, error) {
	players := make([]*tablelogv1.Player, len(game.Players))
	for i, name := range game.Players {
		players[i] = &tablelogv1.Player{Name: name}
	}
	mode := tablelogv1.Mode_MODE_TABLE
	if game.Dealt {
		mode = tablelogv1.Mode_MODE_DEALT
	}
	resp, err := unary(c, ctx, c.Raw.CreateGame, &tablelogv1.CreateGameRequest{
		Game: game.Game, Players: players, Options: game.Options, Mode: mode, Title: game.Title,
		RequestId: requestID(game.RequestID),
	})
	return resp.GetGame(), err
}

// GetGame returns a game's summary.
func (c *Client) GetGame(ctx context.Context, gameID string) (*tablelogv1.GameSummary, error) {
	resp, err := unary(c, ctx, c.Raw.GetGame, &tablelogv1.GetGameRequest{GameId: gameID})
	return resp.GetGame(), err
}

// GamesFilter chooses the games ListGames yields; a zero field does not filter.
type GamesFilter struct {
	// Game is a game type, such as "splendor".
	Game string
	// Status is a game status (GAME_STATUS_UNSPECIFIED: any).
	Status tablelogv1.GameStatus
	// Player is a seat's whole player name, in any case (ListGamesRequest.player).
	Player string
}

// ListGames yields every game the filter chooses, newest first, page after page.
func (c *Client) ListGames(ctx context.Context, filter GamesFilter) iter.Seq2[*tablelogv1.GameSummary, error] {
	return func(yield func(*tablelogv1.GameSummary, error) bool) {
		token := ""
		for {
			request := &tablelogv1.ListGamesRequest{Game: filter.Game, Status: filter.Status, Player: filter.Player, PageToken: token}
			resp, err := unary(c, ctx, c.Raw.ListGames, request)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, summary := range resp.GetGames() {
				if !yield(summary, nil) {
					return
				}
			}
			if token = resp.GetNextPageToken(); token == "" {
				return
			}
		}
	}
}

// Write carries what every change to a game's history needs.
type Write struct {
	// ExpectedVersion is the version the caller saw; another current version fails with
	// STALE_VERSION (the error's CurrentVersion says which).
	ExpectedVersion uint64
	// RequestID is the idempotency key: the same id twice is stored once. Empty: a fresh one.
	RequestID string
	// Seat is, with notation, the seat the recorder says is moving (nil: whoever is to move).
	Seat *uint32
	// IncludeState asks RecordNotation and RecordMove to return the state after the move.
	IncludeState bool
}

// RecordNotation records a move typed in the game's notation; the server parses it.
func (c *Client) RecordNotation(ctx context.Context, gameID, notation string, w Write) (*tablelogv1.RecordMoveResponse, error) {
	return unary(c, ctx, c.Raw.RecordMove, &tablelogv1.RecordMoveRequest{
		GameId: gameID, Input: &tablelogv1.RecordMoveRequest_Notation{Notation: notation},
		ExpectedVersion: w.ExpectedVersion, RequestId: requestID(w.RequestID), Seat: w.Seat,
		IncludeState: w.IncludeState,
	})
}

// RecordMove records a typed move.
func (c *Client) RecordMove(ctx context.Context, gameID string, move *tablelogv1.Move, w Write) (*tablelogv1.RecordMoveResponse, error) {
	return unary(c, ctx, c.Raw.RecordMove, &tablelogv1.RecordMoveRequest{
		GameId: gameID, Input: &tablelogv1.RecordMoveRequest_Move{Move: move},
		ExpectedVersion: w.ExpectedVersion, RequestId: requestID(w.RequestID), IncludeState: w.IncludeState,
	})
}

// Undo takes back the last move in effect (a MoveUndone event; nothing is deleted).
func (c *Client) Undo(ctx context.Context, gameID string, w Write, reason string) (*tablelogv1.UndoMoveResponse, error) {
	return unary(c, ctx, c.Raw.UndoMove, &tablelogv1.UndoMoveRequest{
		GameId: gameID, ExpectedVersion: w.ExpectedVersion, RequestId: requestID(w.RequestID), Reason: reason,
	})
}

// Redo re-applies the most recently undone move.
func (c *Client) Redo(ctx context.Context, gameID string, w Write) (*tablelogv1.RedoMoveResponse, error) {
	return unary(c, ctx, c.Raw.RedoMove, &tablelogv1.RedoMoveRequest{
		GameId: gameID, ExpectedVersion: w.ExpectedVersion, RequestId: requestID(w.RequestID),
	})
}

// Abandon stops a game before its end.
func (c *Client) Abandon(ctx context.Context, gameID string, w Write, reason string) (*tablelogv1.GameSummary, error) {
	resp, err := unary(c, ctx, c.Raw.AbandonGame, &tablelogv1.AbandonGameRequest{
		GameId: gameID, ExpectedVersion: w.ExpectedVersion, RequestId: requestID(w.RequestID), Reason: reason,
	})
	return resp.GetGame(), err
}

// DeleteGame deletes a game (the club's owner only): a tombstone is appended, the game leaves
// the listings and the club's standings, stays readable and verifiable, and refuses every
// later change. Deleting a deleted game answers its tombstone again.
func (c *Client) DeleteGame(ctx context.Context, gameID string, reqID string, reason string) (*tablelogv1.GameSummary, error) {
	resp, err := unary(c, ctx, c.Raw.DeleteGame, &tablelogv1.DeleteGameRequest{
		GameId: gameID, RequestId: requestID(reqID), Reason: reason,
	})
	return resp.GetGame(), err
}

// State returns the state at a revision (0: the head) as viewer sees it (nil: spectator).
func (c *Client) State(ctx context.Context, gameID string, revision uint64, viewer *tablelogv1.Viewer) (*tablelogv1.StateSnapshot, error) {
	if viewer == nil {
		viewer = Spectator
	}
	resp, err := unary(c, ctx, c.Raw.GetState, &tablelogv1.GetStateRequest{GameId: gameID, Revision: revision, Viewer: viewer})
	return resp.GetState(), err
}

// LegalMoves is every legal move at a revision, every page collected.
type LegalMoves struct {
	Moves     []*tablelogv1.LegalMove
	TotalSize uint32
	ToMove    *tablelogv1.ToMove
}

// LegalMoves lists the legal moves at a revision (0: the head), typed and as notation.
func (c *Client) LegalMoves(ctx context.Context, gameID string, revision uint64) (*LegalMoves, error) {
	out := &LegalMoves{}
	token := ""
	for {
		resp, err := unary(c, ctx, c.Raw.ListLegalMoves, &tablelogv1.ListLegalMovesRequest{GameId: gameID, Revision: revision, PageToken: token})
		if err != nil {
			return nil, err
		}
		out.Moves = append(out.Moves, resp.GetMoves()...)
		out.TotalSize, out.ToMove = resp.GetTotalSize(), resp.GetToMove()
		if token = resp.GetNextPageToken(); token == "" {
			return out, nil
		}
	}
}

// Replay yields each event between two revisions (to 0: the head) with the state after it.
func (c *Client) Replay(ctx context.Context, gameID string, from, to uint64, viewer *tablelogv1.Viewer) iter.Seq2[*tablelogv1.ReplayGameResponse, error] {
	return c.replay(ctx, &tablelogv1.ReplayGameRequest{GameId: gameID, FromRevision: from, ToRevision: to, Viewer: viewer})
}

// ReplayVariation streams the main line up to an annotated move, then the line of its
// variation that path names (an empty Line: the variation itself), each step marked by its
// Variation.
func (c *Client) ReplayVariation(ctx context.Context, gameID string, path *tablelogv1.VariationPath, from uint64, viewer *tablelogv1.Viewer) iter.Seq2[*tablelogv1.ReplayGameResponse, error] {
	return c.replay(ctx, &tablelogv1.ReplayGameRequest{GameId: gameID, FromRevision: from, Viewer: viewer, Variation: path})
}

func (c *Client) replay(ctx context.Context, request *tablelogv1.ReplayGameRequest) iter.Seq2[*tablelogv1.ReplayGameResponse, error] {
	if request.Viewer == nil {
		request.Viewer = Spectator
	}
	return func(yield func(*tablelogv1.ReplayGameResponse, error) bool) {
		ctx, cancel := context.WithCancel(c.streamContext(ctx))
		defer cancel()
		if c.unusable != nil {
			yield(nil, c.unusable)
			return
		}
		stream, err := c.Raw.ReplayGame(ctx, request)
		if err != nil {
			yield(nil, c.wrap(err))
			return
		}
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, c.wrap(err))
				return
			}
			if !yield(resp, nil) {
				return
			}
		}
	}
}

// WatchItem is one item of a watch: an update (Event and State set) or a heartbeat
// (HeadRevision and Time set, Event nil).
type WatchItem struct {
	Event        *tablelogv1.Event
	State        *tablelogv1.StateSnapshot
	HeadRevision uint64
	Time         *timestamppb.Timestamp
}

// IsHeartbeat tells a heartbeat from an update.
func (w WatchItem) IsHeartbeat() bool { return w.Event == nil }

// WatchOptions says where a watch starts and what it shows.
type WatchOptions struct {
	// From replays from this revision; 0: only what happens from now on.
	From   uint64
	Viewer *tablelogv1.Viewer // nil: spectator
	// HeartbeatSeconds between heartbeats while nothing happens (0: the server's default).
	HeartbeatSeconds uint32
	// NoResume turns off resuming (see Watch).
	NoResume bool
	// ResumeFor is how long a watch is retried without news (0: a minute).
	ResumeFor time.Duration
}

// resumable says whether a watch that ended with err is opened again: the server
// restarting or its Redis away (UNAVAILABLE), or this reader having fallen behind
// (WATCHER_TOO_SLOW), as the Python client does.
func resumable(err error) bool {
	var refused *Error
	if errors.As(err, &refused) {
		return refused.Code == codes.Unavailable || refused.Reason == "WATCHER_TOO_SLOW"
	}
	return status.Code(err) == codes.Unavailable
}

// Watch replays from a revision, then follows the game live until ctx ends or the loop
// stops; the end of ctx ends the sequence without an error.
//
// Unless options.NoResume, a stream the server ends in a way worth retrying (UNAVAILABLE:
// the server restarting or its Redis away; WATCHER_TOO_SLOW: this reader fell behind) is
// opened again from the last revision seen, retrying for up to options.ResumeFor without
// news; events seen already (by sequence) are skipped, so each comes once. A server that
// never answered is not retried (a wrong address fails at once).
func (c *Client) Watch(ctx context.Context, gameID string, options WatchOptions) iter.Seq2[WatchItem, error] {
	viewer := options.Viewer
	if viewer == nil {
		viewer = Spectator
	}
	resumeFor := options.ResumeFor
	if resumeFor == 0 {
		resumeFor = time.Minute
	}
	return func(yield func(WatchItem, error) bool) {
		ctx, cancel := context.WithCancel(c.streamContext(ctx))
		defer cancel()
		if c.unusable != nil {
			yield(WatchItem{}, c.unusable)
			return
		}
		from := options.From
		var seenSequence uint64
		answered := false
		sinceNews := time.Now()
		attempt := 0
		for {
			err := c.watchOnce(ctx, gameID, viewer, options.HeartbeatSeconds, &from, &seenSequence, func(item WatchItem) bool {
				answered, sinceNews, attempt = true, time.Now(), 0
				return yield(item, nil)
			})
			if err == nil || ctx.Err() != nil {
				return
			}
			if errStop := (*stopWatching)(nil); errors.As(err, &errStop) {
				return
			}
			if options.NoResume || !answered || !resumable(err) || time.Since(sinceNews) > resumeFor {
				yield(WatchItem{}, err)
				return
			}
			attempt++
			wait := min(2*time.Second, time.Duration(100<<attempt)*time.Millisecond)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// stopWatching is what watchOnce returns when the caller's loop stopped.
type stopWatching struct{}

func (*stopWatching) Error() string { return "the loop stopped" }

// watchOnce runs one WatchGame stream, moving *from past each event delivered; nil when
// the stream ended cleanly.
func (c *Client) watchOnce(
	ctx context.Context, gameID string, viewer *tablelogv1.Viewer, heartbeat uint32,
	from *uint64, seenSequence *uint64, deliver func(WatchItem) bool,
) error {
	stream, err := c.Raw.WatchGame(ctx, &tablelogv1.WatchGameRequest{
		GameId: gameID, FromRevision: *from, Viewer: viewer, HeartbeatSeconds: heartbeat,
	})
	if err != nil {
		return c.wrap(err)
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return c.wrap(err)
		}
		var item WatchItem
		if update := resp.GetUpdate(); update != nil {
			event := update.GetEvent()
			if event.GetSequence() != 0 && event.GetSequence() <= *seenSequence {
				continue // seen before the stream was opened again
			}
			// Annotations share their move's revision: watch again from it.
			*seenSequence, *from = event.GetSequence(), event.GetRevision()
			item = WatchItem{Event: event, State: update.GetState()}
		} else if beat := resp.GetHeartbeat(); beat != nil {
			if *seenSequence == 0 {
				*from = beat.GetHeadRevision() + 1
			}
			item = WatchItem{HeadRevision: beat.GetHeadRevision(), Time: beat.GetTime()}
		} else {
			continue
		}
		if !deliver(item) {
			return &stopWatching{}
		}
	}
}

// NewAnnotation is a comment and/or glyph ("!", "?", "!?", ...) anchored to a revision.
type NewAnnotation struct {
	Revision  uint64
	Comment   string
	Glyph     string
	RequestID string
	// Variation is a line played instead of the annotated move (moves by Notation, nested
	// lines in a move's Variations); the server checks it and answers it typed and canonical.
	Variation *tablelogv1.Variation
}

// Annotate adds an annotation; the move history's version does not change.
func (c *Client) Annotate(ctx context.Context, gameID string, a NewAnnotation) (*tablelogv1.Annotation, error) {
	resp, err := unary(c, ctx, c.Raw.AddAnnotation, &tablelogv1.AddAnnotationRequest{
		GameId: gameID, Revision: a.Revision, Comment: a.Comment, Glyph: a.Glyph, RequestId: requestID(a.RequestID),
		Variation: a.Variation,
	})
	return resp.GetAnnotation(), err
}

// RemoveAnnotation withdraws an annotation (it stays in the audit log).
func (c *Client) RemoveAnnotation(ctx context.Context, gameID, annotationID string) error {
	_, err := unary(c, ctx, c.Raw.RemoveAnnotation, &tablelogv1.RemoveAnnotationRequest{
		GameId: gameID, AnnotationId: annotationID, RequestId: NewRequestID(),
	})
	return err
}

// Annotations lists a game's annotations in effect, every page collected.
func (c *Client) Annotations(ctx context.Context, gameID string) ([]*tablelogv1.Annotation, error) {
	var out []*tablelogv1.Annotation
	token := ""
	for {
		resp, err := unary(c, ctx, c.Raw.ListAnnotations, &tablelogv1.ListAnnotationsRequest{GameId: gameID, PageToken: token})
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetAnnotations()...)
		if token = resp.GetNextPageToken(); token == "" {
			return out, nil
		}
	}
}

// Audit returns every event of a game, undone moves included, every page collected.
func (c *Client) Audit(ctx context.Context, gameID string) ([]*tablelogv1.AuditEntry, error) {
	var out []*tablelogv1.AuditEntry
	token := ""
	for {
		resp, err := unary(c, ctx, c.Raw.GetAuditLog, &tablelogv1.GetAuditLogRequest{GameId: gameID, PageToken: token})
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetEntries()...)
		if token = resp.GetNextPageToken(); token == "" {
			return out, nil
		}
	}
}

// Verify recomputes the hash chain and re-folds every move on the server.
func (c *Client) Verify(ctx context.Context, gameID string) (*tablelogv1.VerifyGameResponse, error) {
	return unary(c, ctx, c.Raw.VerifyGame, &tablelogv1.VerifyGameRequest{GameId: gameID})
}

// DescribeToMove renders whose decision it is as "seat:N", "chance" or "terminal".
func DescribeToMove(toMove *tablelogv1.ToMove) string {
	switch who := toMove.GetWho().(type) {
	case *tablelogv1.ToMove_Seat:
		return fmt.Sprintf("seat:%d", who.Seat)
	case *tablelogv1.ToMove_Chance:
		return "chance"
	case *tablelogv1.ToMove_Terminal:
		return "terminal"
	default:
		return "unspecified"
	}
}
