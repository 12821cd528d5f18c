// Package conformance runs the conformance scenario (clients/conformance/scenario.json)
// through the Go wrapper. The scenario's format is described in clients/conformance/README.md.
package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	tablelogv1 "github.com/tablelog/tablelog/clients/go/gen/tablelog/v1"
	"github.com/tablelog/tablelog/clients/go/tablelog"
)

// Scenario is the whole file.
type Scenario struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Create      CreateSpec      `json:"create"`
	Steps       []Step          `json:"steps"`
	Reflection  json.RawMessage `json:"reflection"`
}

// CreateSpec is the game every run creates.
type CreateSpec struct {
	Game    string   `json:"game"`
	Players []string `json:"players"`
	Mode    string   `json:"mode"`
	Title   string   `json:"title"`
}

// Step is one call and the outcome it must have.
type Step struct {
	ID               string          `json:"id"`
	Op               string          `json:"op"`
	Comment          string          `json:"comment"`
	Note             string          `json:"note"`
	Client           string          `json:"client"`
	As               string          `json:"as"`
	Change           string          `json:"change"`
	Notation         *string         `json:"notation"`
	Move             json.RawMessage `json:"move"`
	Version          json.RawMessage `json:"version"`
	RequestID        string          `json:"request_id"`
	RetryOf          string          `json:"retry_of"`
	IncludeState     bool            `json:"include_state"`
	Reason           string          `json:"reason"`
	Revision         uint64          `json:"revision"`
	Viewer           json.RawMessage `json:"viewer"`
	Glyph            string          `json:"glyph"`
	From             json.RawMessage `json:"from"`
	To               uint64          `json:"to"`
	HeartbeatSeconds *uint32         `json:"heartbeat_seconds"`
	TimeoutSeconds   float64         `json:"timeout_seconds"`
	During           *Step           `json:"during"`
	Game             string          `json:"game"`
	Season           string          `json:"season"`
	Create           *CreateSpec     `json:"create"`
	Notations        []string        `json:"notations"`
	Name             string          `json:"name"`
	Since            string          `json:"since"`
	WithinSeconds    float64         `json:"within_seconds"`
	Expect           Expect          `json:"expect"`
}

// Expect lists what a step's outcome must show; absent keys are not checked.
type Expect struct {
	Error          *ExpectedError     `json:"error"`
	Version        *uint64            `json:"version"`
	MoveCount      *uint32            `json:"move_count"`
	ToMove         *string            `json:"to_move"`
	Status         *string            `json:"status"`
	Notation       *string            `json:"notation"`
	Events         *int               `json:"events"`
	StateRevision  *uint64            `json:"state_revision"`
	SameAsOriginal bool               `json:"same_as_original"`
	Revision       *uint64            `json:"revision"`
	Moves          *[]string          `json:"moves"`
	MovesCount     *int               `json:"moves_count"`
	TextContains   []string           `json:"text_contains"`
	Contains       []string           `json:"contains"`
	Excludes       []string           `json:"excludes"`
	TotalSize      *uint32            `json:"total_size"`
	Comment        *string            `json:"comment"`
	Glyph          *string            `json:"glyph"`
	Count          *int               `json:"count"`
	Comments       *[]string          `json:"comments"`
	FirstRevision  *uint64            `json:"first_revision"`
	LastRevision   *uint64            `json:"last_revision"`
	CompareStates  bool               `json:"compare_states"`
	Undone         *int               `json:"undone"`
	OK             *bool              `json:"ok"`
	EventsChecked  *uint64            `json:"events_checked"`
	Role           *string            `json:"role"`
	Actor          *string            `json:"actor"`
	Game           *string            `json:"game"`
	Rows           []ExpectedStanding `json:"rows"`
	Lag            *ExpectedLag       `json:"lag"`
	DisplayName    *string            `json:"display_name"`
	Games          *[]ExpectedRecord  `json:"games"`
	Figures        []string           `json:"figures"`
	Added          *ExpectedAdded     `json:"added"`
}

// ExpectedStanding is a standings row (of `player`) or a record's standing.
type ExpectedStanding struct {
	Player       string          `json:"player"`
	Games        *uint32         `json:"games"`
	Wins         *float64        `json:"wins"`
	Points       *int64          `json:"points"`
	AveragePlace *float64        `json:"average_place"`
	Rating       *ExpectedRating `json:"rating"`
}

// ExpectedRating is a rating point; `game_id` "$game" is the current game's id.
type ExpectedRating struct {
	GameID  *string  `json:"game_id"`
	Mu      *float64 `json:"mu"`
	Sigma   *float64 `json:"sigma"`
	Ordinal *float64 `json:"ordinal"`
}

// ExpectedLag bounds the projections' lag, which depends on the moment read.
type ExpectedLag struct {
	PendingGamesAtMost    *uint64  `json:"pending_games_at_most"`
	SecondsAtMost         *float64 `json:"seconds_at_most"`
	ProjectedGamesAtLeast uint64   `json:"projected_games_at_least"`
}

// ExpectedRecord is a player's record in one game type.
type ExpectedRecord struct {
	Game       string                `json:"game"`
	Standing   ExpectedStanding      `json:"standing"`
	Places     *[]uint32             `json:"places"`
	Scores     *[]int64              `json:"scores"`
	History    *[]ExpectedRating     `json:"history"`
	HeadToHead *[]ExpectedHeadToHead `json:"head_to_head"`
	Figures    map[string]float64    `json:"figures"`
}

// ExpectedHeadToHead is a head-to-head row against `opponent`.
type ExpectedHeadToHead struct {
	Opponent string `json:"opponent"`
	Games    uint32 `json:"games"`
	Ahead    uint32 `json:"ahead"`
	Level    uint32 `json:"level"`
	Behind   uint32 `json:"behind"`
}

// ExpectedAdded is what a game type's statistics gained since an earlier step's (`since`).
type ExpectedAdded struct {
	Games *int64         `json:"games"`
	Moves *float64       `json:"moves"`
	Seats []ExpectedSeat `json:"seats"`
}

// ExpectedSeat is what one seat order gained.
type ExpectedSeat struct {
	Order uint32  `json:"order"`
	Games int64   `json:"games"`
	Wins  float64 `json:"wins"`
}

// pollInterval is how often a step with `within_seconds` is tried again.
const pollInterval = 100 * time.Millisecond

// tolerance is how far a fractional figure (a win share, a rating, an average) may be from
// the expected one: the server computes them in floating point.
const tolerance = 1e-6

// ExpectedError is a refusal: the status code's name, the ErrorInfo reason and metadata.
type ExpectedError struct {
	Code     string            `json:"code"`
	Reason   string            `json:"reason"`
	Metadata map[string]string `json:"metadata"`
}

type recorded struct {
	request  *tablelogv1.RecordMoveRequest
	response *tablelogv1.RecordMoveResponse
}

// Runner runs the steps in order against one server, tracking the game id and version.
type Runner struct {
	clients  map[string]*tablelog.Client
	scenario *Scenario
	log      func(string)
	gameID   string
	version  uint64
	records  map[string]recorded
	// members holds who each identity's token names, asked once (WhoAmI).
	members map[string]*tablelogv1.Member
	// runTag is what `$run` stands for in this run's names: its players are its own.
	runTag string
	// stats holds each game_type_stats step's answer, for a later step's `since`.
	stats map[string]*tablelogv1.GetGameTypeStatsResponse
}

// Recorder and Spectator are the identities a step calls as (its "as"; default Recorder).
const (
	Recorder  = "recorder"
	Spectator = "spectator"
)

// SpectatorClient is the key of the spectator's connection in the clients given to NewRunner.
const SpectatorClient = "spectator"

// NewRunner prepares a run; clients holds "a" and "b", two connections as the recorder (as
// different users), and SpectatorClient, one as the spectator (needed by steps that say so).
func NewRunner(clients map[string]*tablelog.Client, scenario *Scenario, log func(string)) *Runner {
	tag := make([]byte, 4)
	_, _ = rand.Read(tag) // never fails (crypto/rand)
	return &Runner{
		clients: clients, scenario: scenario, log: log,
		records: map[string]recorded{}, members: map[string]*tablelogv1.Member{},
		runTag: hex.EncodeToString(tag), stats: map[string]*tablelogv1.GetGameTypeStatsResponse{},
	}
}

// named is a scenario's string with `$run` replaced by the run's tag, and `$game` (the whole
// string) by the current game's id.
func (r *Runner) named(text string) string {
	if text == "$game" {
		return r.gameID
	}
	return strings.ReplaceAll(text, "$run", r.runTag)
}

// Run runs every step and stops at the first failure (later steps depend on earlier ones).
func (r *Runner) Run(ctx context.Context) (passed, failed int) {
	for i := range r.scenario.Steps {
		step := &r.scenario.Steps[i]
		if err := r.step(ctx, step); err != nil {
			r.log(fmt.Sprintf("FAIL %s (%s): %s", step.ID, step.Op, explain(err)))
			return passed, 1
		}
		passed++
		r.log(fmt.Sprintf("ok   %s (%s)", step.ID, step.Op))
	}
	return passed, 0
}

// explain says a server's refusal in words (who may not do what, and why); other errors, and
// refusals wrapped in the runner's own context, as they are.
func explain(err error) string {
	if refused, ok := err.(*tablelog.Error); ok {
		return refused.Explain()
	}
	return err.Error()
}

func (r *Runner) client(step *Step) *tablelog.Client {
	if step.As == Spectator {
		return r.clients[SpectatorClient]
	}
	if step.Client == "" {
		return r.clients["a"]
	}
	return r.clients[step.Client]
}

// clientOf is the connection that calls as an identity.
func (r *Runner) clientOf(identity string) (*tablelog.Client, error) {
	switch identity {
	case "", Recorder:
		return r.clients["a"], nil
	case Spectator:
		if client := r.clients[SpectatorClient]; client != nil {
			return client, nil
		}
		return nil, errors.New("no spectator token: give --spectator-token or set $TABLELOG_SPECTATOR_TOKEN")
	}
	return nil, fmt.Errorf("unknown identity %q: recorder or spectator", identity)
}

// member is who an identity's token names.
func (r *Runner) member(ctx context.Context, identity string) (*tablelogv1.Member, error) {
	if member, ok := r.members[identity]; ok {
		return member, nil
	}
	client, err := r.clientOf(identity)
	if err != nil {
		return nil, err
	}
	me, err := client.WhoAmI(ctx)
	if err != nil {
		return nil, err
	}
	if me.GetMember().GetMemberId() == "" {
		return nil, fmt.Errorf("the %s token names no member", identity)
	}
	r.members[identity] = me.GetMember()
	return me.GetMember(), nil
}

// step runs one step; with `within_seconds`, it is tried again until it passes or that time
// is up (for reads of the projections, which follow the games a moment later).
func (r *Runner) step(ctx context.Context, step *Step) error {
	deadline := time.Now().Add(time.Duration(step.WithinSeconds * float64(time.Second)))
	for {
		err := r.attempt(ctx, step)
		if err == nil || !time.Now().Before(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pollInterval):
		}
	}
}

func (r *Runner) attempt(ctx context.Context, step *Step) error {
	if _, err := r.clientOf(step.As); err != nil {
		return err
	}
	if r.client(step) == nil {
		return fmt.Errorf("unknown client %q", step.Client)
	}
	var err error
	switch step.Op {
	case "whoami":
		err = r.whoami(ctx, step)
	case "amend":
		err = r.amend(ctx, step)
	case "create":
		err = r.create(ctx, step)
	case "record":
		err = r.record(ctx, step)
	case "undo":
		err = r.undo(ctx, step)
	case "redo":
		err = r.redo(ctx, step)
	case "game":
		err = r.game(ctx, step)
	case "state":
		err = r.state(ctx, step)
	case "legal_moves":
		err = r.legalMoves(ctx, step)
	case "annotate":
		err = r.annotate(ctx, step)
	case "annotations":
		err = r.annotations(ctx, step)
	case "replay":
		err = r.replay(ctx, step)
	case "watch":
		err = r.watch(ctx, step)
	case "audit":
		err = r.audit(ctx, step)
	case "verify":
		err = r.verify(ctx, step)
	case "standings":
		err = r.standings(ctx, step)
	case "play":
		err = r.play(ctx, step)
	case "player":
		err = r.player(ctx, step)
	case "game_type_stats":
		err = r.gameTypeStats(ctx, step)
	default:
		return fmt.Errorf("unknown op %q", step.Op)
	}
	expected := step.Expect.Error
	var refused *tablelog.Error
	switch {
	case expected == nil:
		return err
	case err == nil:
		return fmt.Errorf("expected %s, but the call succeeded", expected.Reason)
	case !errors.As(err, &refused):
		return err
	}
	return r.expectError(refused, expected)
}

func (r *Runner) expectError(err *tablelog.Error, expected *ExpectedError) error {
	if err.Code.String() != codeString(expected.Code) {
		return fmt.Errorf("status code: expected %s, got %s (%v)", expected.Code, err.Code, err)
	}
	if err.Reason != expected.Reason {
		return fmt.Errorf("reason: expected %s, got %q (%v)", expected.Reason, err.Reason, err)
	}
	for key, value := range expected.Metadata {
		actual, ok := err.Metadata[key]
		if !ok {
			return fmt.Errorf("error metadata has no %q: %v", key, err.Metadata)
		}
		if value == "$version" {
			value = strconv.FormatUint(r.version, 10)
		}
		if value != "*" && actual != value {
			return fmt.Errorf("error metadata %s: expected %q, got %q", key, value, actual)
		}
	}
	return nil
}

// codeString turns "FAILED_PRECONDITION" into grpc-go's "FailedPrecondition".
func codeString(name string) string {
	var b strings.Builder
	for _, word := range strings.Split(strings.ToLower(name), "_") {
		if word != "" {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	if b.String() == "Ok" {
		return "OK"
	}
	return b.String()
}

func (r *Runner) expectedVersion(step *Step) (uint64, error) {
	if len(step.Version) == 0 {
		return r.version, nil
	}
	var text string
	if json.Unmarshal(step.Version, &text) == nil {
		switch text {
		case "current":
			return r.version, nil
		case "stale":
			return r.version - 1, nil
		}
		return 0, fmt.Errorf("unknown version %q", text)
	}
	var number uint64
	if err := json.Unmarshal(step.Version, &number); err != nil {
		return 0, fmt.Errorf("version: %w", err)
	}
	return number, nil
}

func viewerOf(raw json.RawMessage) (*tablelogv1.Viewer, error) {
	if len(raw) == 0 {
		return tablelog.Spectator, nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		switch text {
		case "spectator":
			return tablelog.Spectator, nil
		case "full":
			return tablelog.Full, nil
		}
		return nil, fmt.Errorf("unknown viewer %q", text)
	}
	var seat struct {
		Seat *uint32 `json:"seat"`
	}
	if err := json.Unmarshal(raw, &seat); err != nil || seat.Seat == nil {
		return nil, fmt.Errorf("unknown viewer %s", raw)
	}
	return tablelog.Seat(*seat.Seat), nil
}

func check(label string, actual, expected any) error {
	if !reflect.DeepEqual(actual, expected) {
		return fmt.Errorf("%s: expected %v, got %v", label, expected, actual)
	}
	return nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Runner) expectGame(game *tablelogv1.GameSummary, expect *Expect) error {
	if game == nil {
		return errors.New("the response has no game")
	}
	var errs []error
	if expect.Version != nil {
		errs = append(errs, check("version", game.GetVersion(), *expect.Version))
	}
	if expect.MoveCount != nil {
		errs = append(errs, check("move_count", game.GetMoveCount(), *expect.MoveCount))
	}
	if expect.ToMove != nil {
		errs = append(errs, check("to_move", tablelog.DescribeToMove(game.GetToMove()), *expect.ToMove))
	}
	if expect.Status != nil {
		errs = append(errs, check("status", game.GetStatus().String(), *expect.Status))
	}
	return firstError(errs...)
}

func (r *Runner) create(ctx context.Context, step *Step) error {
	spec := r.scenario.Create
	if step.Create != nil {
		spec = *step.Create
	}
	players := make([]string, len(spec.Players))
	for i, name := range spec.Players {
		players[i] = r.named(name)
	}
	game, err := r.client(step).CreateGame(ctx, tablelog.NewGame{
		Game: spec.Game, Players: players, Dealt: spec.Mode == "dealt", Title: r.named(spec.Title),
		RequestID: step.RequestID,
	})
	if err != nil {
		return err
	}
	r.gameID, r.version = game.GetGameId(), game.GetVersion()
	return r.expectGame(game, &step.Expect)
}

func (r *Runner) record(ctx context.Context, step *Step) error {
	var request *tablelogv1.RecordMoveRequest
	if step.RetryOf != "" {
		original, ok := r.records[step.RetryOf]
		if !ok {
			return fmt.Errorf("no record step %q", step.RetryOf)
		}
		request = original.request
	} else {
		version, err := r.expectedVersion(step)
		if err != nil {
			return err
		}
		request = &tablelogv1.RecordMoveRequest{GameId: r.gameID, ExpectedVersion: version, RequestId: step.RequestID, IncludeState: step.IncludeState}
		if request.RequestId == "" {
			request.RequestId = tablelog.NewRequestID()
		}
		if step.Notation != nil {
			request.Input = &tablelogv1.RecordMoveRequest_Notation{Notation: *step.Notation}
		} else {
			move := &tablelogv1.Move{}
			if err := protojson.Unmarshal(step.Move, move); err != nil {
				return fmt.Errorf("move: %w", err)
			}
			request.Input = &tablelogv1.RecordMoveRequest_Move{Move: move}
		}
	}
	write := tablelog.Write{ExpectedVersion: request.GetExpectedVersion(), RequestID: request.GetRequestId(), IncludeState: request.GetIncludeState()}
	var response *tablelogv1.RecordMoveResponse
	var err error
	if notation, ok := request.GetInput().(*tablelogv1.RecordMoveRequest_Notation); ok {
		response, err = r.client(step).RecordNotation(ctx, r.gameID, notation.Notation, write)
	} else {
		response, err = r.client(step).RecordMove(ctx, r.gameID, request.GetMove(), write)
	}
	if err != nil {
		return err
	}
	r.records[step.ID] = recorded{request, response}
	r.version = response.GetGame().GetVersion()
	expect := &step.Expect
	errs := []error{r.expectGame(response.GetGame(), expect)}
	if expect.Notation != nil {
		if len(response.GetEvents()) == 0 {
			return errors.New("the response has no event")
		}
		notation := response.GetEvents()[0].GetMoveRecorded().GetNotation()
		errs = append(errs, check("notation", notation, *expect.Notation))
	}
	if expect.Events != nil {
		errs = append(errs, check("events", len(response.GetEvents()), *expect.Events))
	}
	if expect.StateRevision != nil {
		errs = append(errs, check("state revision", response.GetState().GetRevision(), *expect.StateRevision))
		if expect.ToMove != nil {
			errs = append(errs, check("state to_move", tablelog.DescribeToMove(response.GetState().GetToMove()), *expect.ToMove))
		}
	}
	if expect.SameAsOriginal {
		original := r.records[step.RetryOf].response
		errs = append(errs,
			check("version of the retry", response.GetGame().GetVersion(), original.GetGame().GetVersion()),
			check("events of the retry", eventIDs(response.GetEvents()), eventIDs(original.GetEvents())))
	}
	return firstError(errs...)
}

func eventIDs(events []*tablelogv1.Event) []string {
	ids := make([]string, len(events))
	for i, event := range events {
		ids[i] = fmt.Sprintf("%d:%x", event.GetSequence(), event.GetHash())
	}
	return ids
}

// play records each of the step's notations in turn at the current version; the expectation
// is of the last answer.
func (r *Runner) play(ctx context.Context, step *Step) error {
	if len(step.Notations) == 0 {
		return errors.New("a play step records at least one move")
	}
	var response *tablelogv1.RecordMoveResponse
	for _, notation := range step.Notations {
		var err error
		response, err = r.client(step).RecordNotation(ctx, r.gameID, notation,
			tablelog.Write{ExpectedVersion: r.version, RequestID: tablelog.NewRequestID()})
		if err != nil {
			return fmt.Errorf("%s: %w", notation, err)
		}
		r.version = response.GetGame().GetVersion()
	}
	return r.expectGame(response.GetGame(), &step.Expect)
}

func (r *Runner) undo(ctx context.Context, step *Step) error {
	version, err := r.expectedVersion(step)
	if err != nil {
		return err
	}
	response, err := r.client(step).Undo(ctx, r.gameID, tablelog.Write{ExpectedVersion: version, RequestID: step.RequestID}, step.Reason)
	if err != nil {
		return err
	}
	r.version = response.GetGame().GetVersion()
	return r.expectGame(response.GetGame(), &step.Expect)
}

func (r *Runner) redo(ctx context.Context, step *Step) error {
	version, err := r.expectedVersion(step)
	if err != nil {
		return err
	}
	response, err := r.client(step).Redo(ctx, r.gameID, tablelog.Write{ExpectedVersion: version, RequestID: step.RequestID})
	if err != nil {
		return err
	}
	r.version = response.GetGame().GetVersion()
	return r.expectGame(response.GetGame(), &step.Expect)
}

func (r *Runner) amend(ctx context.Context, step *Step) error {
	version, err := r.expectedVersion(step)
	if err != nil {
		return err
	}
	amendment := tablelog.Amendment{Reason: step.Reason}
	switch step.Change {
	case "", "replace":
		amendment.Kind = tablelog.Replace
	case "insert":
		amendment.Kind = tablelog.Insert
	case "delete":
		amendment.Kind = tablelog.Delete
	default:
		return fmt.Errorf("unknown amend change %q", step.Change)
	}
	if step.Notation != nil {
		amendment.Notation = *step.Notation
	} else if len(step.Move) > 0 {
		amendment.Move = &tablelogv1.Move{}
		if err := protojson.Unmarshal(step.Move, amendment.Move); err != nil {
			return fmt.Errorf("move: %w", err)
		}
	}
	response, err := r.client(step).Amend(ctx, r.gameID, step.Revision, amendment,
		tablelog.Write{ExpectedVersion: version, RequestID: step.RequestID})
	if err != nil {
		return err
	}
	r.version = response.GetGame().GetVersion()
	return r.expectGame(response.GetGame(), &step.Expect)
}

func (r *Runner) whoami(ctx context.Context, step *Step) error {
	identity := step.As
	if identity == "" {
		identity = Recorder
	}
	delete(r.members, identity) // asked afresh: this step is the check
	member, err := r.member(ctx, identity)
	if err != nil {
		return err
	}
	if step.Expect.Role != nil {
		return check("role", member.GetRole().String(), *step.Expect.Role)
	}
	return nil
}

func (r *Runner) game(ctx context.Context, step *Step) error {
	game, err := r.client(step).GetGame(ctx, r.gameID)
	if err != nil {
		return err
	}
	return r.expectGame(game, &step.Expect)
}

func (r *Runner) state(ctx context.Context, step *Step) error {
	viewer, err := viewerOf(step.Viewer)
	if err != nil {
		return err
	}
	state, err := r.client(step).State(ctx, r.gameID, step.Revision, viewer)
	if err != nil {
		return err
	}
	expect := &step.Expect
	var errs []error
	if expect.Revision != nil {
		errs = append(errs, check("revision", state.GetRevision(), *expect.Revision))
	}
	if expect.ToMove != nil {
		errs = append(errs, check("to_move", tablelog.DescribeToMove(state.GetToMove()), *expect.ToMove))
	}
	if expect.Moves != nil {
		errs = append(errs, check("moves", nonNil(state.GetMoves()), nonNil(*expect.Moves)))
	}
	if expect.MovesCount != nil {
		errs = append(errs, check("moves_count", len(state.GetMoves()), *expect.MovesCount))
	}
	for _, text := range expect.TextContains {
		if !strings.Contains(state.GetText(), text) {
			errs = append(errs, fmt.Errorf("state text lacks %q:\n%s", text, state.GetText()))
		}
	}
	return firstError(errs...)
}

func nonNil(values []string) []string {
	if values == nil {
		return []string{}
	}
	return values
}

func (r *Runner) legalMoves(ctx context.Context, step *Step) error {
	legal, err := r.client(step).LegalMoves(ctx, r.gameID, step.Revision)
	if err != nil {
		return err
	}
	notations := make([]string, len(legal.Moves))
	for i, move := range legal.Moves {
		notations[i] = move.GetNotation()
	}
	expect := &step.Expect
	for _, text := range expect.Contains {
		if !slices.Contains(notations, text) {
			return fmt.Errorf("legal moves lack %q: %v", text, notations)
		}
	}
	for _, text := range expect.Excludes {
		if slices.Contains(notations, text) {
			return fmt.Errorf("legal moves include %q", text)
		}
	}
	var errs []error
	if expect.TotalSize != nil {
		errs = append(errs,
			check("total_size", legal.TotalSize, *expect.TotalSize),
			check("moves listed", uint32(len(notations)), *expect.TotalSize))
	}
	if expect.ToMove != nil {
		errs = append(errs, check("to_move", tablelog.DescribeToMove(legal.ToMove), *expect.ToMove))
	}
	return firstError(errs...)
}

func (r *Runner) annotate(ctx context.Context, step *Step) error {
	annotation, err := r.client(step).Annotate(ctx, r.gameID, tablelog.NewAnnotation{
		Revision: step.Revision, Comment: step.Comment, Glyph: step.Glyph, RequestID: step.RequestID,
	})
	if err != nil {
		return err
	}
	expect := &step.Expect
	var errs []error
	if expect.Revision != nil {
		errs = append(errs, check("revision", annotation.GetRevision(), *expect.Revision))
	}
	if expect.Comment != nil {
		errs = append(errs, check("comment", annotation.GetComment(), *expect.Comment))
	}
	if expect.Glyph != nil {
		errs = append(errs, check("glyph", annotation.GetGlyph(), *expect.Glyph))
	}
	if annotation.GetAnnotationId() == "" {
		errs = append(errs, errors.New("the annotation has no id"))
	}
	game, err := r.client(step).GetGame(ctx, r.gameID)
	if err != nil {
		return err
	}
	errs = append(errs, check("version after annotating", game.GetVersion(), r.version))
	return firstError(errs...)
}

func (r *Runner) annotations(ctx context.Context, step *Step) error {
	annotations, err := r.client(step).Annotations(ctx, r.gameID)
	if err != nil {
		return err
	}
	comments := []string{}
	for _, annotation := range annotations {
		comments = append(comments, annotation.GetComment())
	}
	expect := &step.Expect
	var errs []error
	if expect.Count != nil {
		errs = append(errs, check("annotations", len(comments), *expect.Count))
	}
	if expect.Comments != nil {
		errs = append(errs, check("comments", comments, nonNil(*expect.Comments)))
	}
	return firstError(errs...)
}

func (r *Runner) replay(ctx context.Context, step *Step) error {
	viewer, err := viewerOf(step.Viewer)
	if err != nil {
		return err
	}
	var from uint64
	if len(step.From) > 0 {
		if err := json.Unmarshal(step.From, &from); err != nil {
			return fmt.Errorf("from: %w", err)
		}
	}
	var items []*tablelogv1.ReplayGameResponse
	for item, err := range r.client(step).Replay(ctx, r.gameID, from, step.To, viewer) {
		if err != nil {
			return err
		}
		items = append(items, item)
	}
	expect := &step.Expect
	if expect.Count != nil {
		if err := check("replayed items", len(items), *expect.Count); err != nil {
			return err
		}
	}
	if len(items) == 0 {
		return errors.New("the replay streamed nothing")
	}
	var errs []error
	if expect.FirstRevision != nil {
		errs = append(errs, check("first revision", items[0].GetEvent().GetRevision(), *expect.FirstRevision))
	}
	if expect.LastRevision != nil {
		errs = append(errs, check("last revision", items[len(items)-1].GetEvent().GetRevision(), *expect.LastRevision))
	}
	if err := firstError(errs...); err != nil {
		return err
	}
	if expect.CompareStates {
		for _, item := range items {
			revision := item.GetState().GetRevision()
			if err := check("state revision", revision, item.GetEvent().GetRevision()); err != nil {
				return err
			}
			state, err := r.client(step).State(ctx, r.gameID, revision, viewer)
			if err != nil {
				return err
			}
			if !proto.Equal(state, item.GetState()) {
				return fmt.Errorf("replayed state at revision %d differs from GetState", revision)
			}
		}
	}
	return nil
}

func (r *Runner) watch(ctx context.Context, step *Step) error {
	from := r.version
	if len(step.From) > 0 {
		var text string
		if json.Unmarshal(step.From, &text) != nil || text != "current" {
			if err := json.Unmarshal(step.From, &from); err != nil {
				return fmt.Errorf("from: %w", err)
			}
		}
	}
	viewer, err := viewerOf(step.Viewer)
	if err != nil {
		return err
	}
	if step.During == nil || step.Expect.Notation == nil {
		return errors.New("a watch step needs `during` and an expected notation")
	}
	timeout := 15 * time.Second
	if step.TimeoutSeconds > 0 {
		timeout = time.Duration(step.TimeoutSeconds * float64(time.Second))
	}
	heartbeat := uint32(1)
	if step.HeartbeatSeconds != nil {
		heartbeat = *step.HeartbeatSeconds
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	opened := false
	items := r.client(step).Watch(ctx, r.gameID, tablelog.WatchOptions{From: from, Viewer: viewer, HeartbeatSeconds: heartbeat})
	for item, err := range items {
		if err != nil {
			return err
		}
		if !opened {
			// The stream is open once anything (a replayed event or a heartbeat) arrives.
			opened = true
			if err := r.step(ctx, step.During); err != nil {
				return fmt.Errorf("%s (during the watch): %w", step.During.ID, err)
			}
			r.log(fmt.Sprintf("ok   %s (%s, during the watch)", step.During.ID, step.During.Op))
			continue
		}
		if item.IsHeartbeat() || item.Event.GetMoveRecorded() == nil {
			continue
		}
		if item.Event.GetMoveRecorded().GetNotation() != *step.Expect.Notation {
			continue
		}
		if step.Expect.Revision != nil {
			if err := check("watched revision", item.Event.GetRevision(), *step.Expect.Revision); err != nil {
				return err
			}
		}
		return check("watched state revision", item.State.GetRevision(), item.Event.GetRevision())
	}
	if !opened {
		return errors.New("the watch sent nothing within the timeout")
	}
	return errors.New("the watch missed the move within the timeout")
}

func (r *Runner) audit(ctx context.Context, step *Step) error {
	entries, err := r.client(step).Audit(ctx, r.gameID)
	if err != nil {
		return err
	}
	undone := 0
	sequences, wanted := make([]uint64, len(entries)), make([]uint64, len(entries))
	for i, entry := range entries {
		if entry.GetUndone() {
			undone++
		}
		sequences[i], wanted[i] = entry.GetEvent().GetSequence(), uint64(i+1)
	}
	expect := &step.Expect
	errs := []error{check("audit sequences", sequences, wanted)}
	if expect.Count != nil {
		errs = append(errs, check("audit entries", len(entries), *expect.Count))
	}
	if expect.Undone != nil {
		errs = append(errs, check("undone entries", undone, *expect.Undone))
	}
	if err := firstError(errs...); err != nil || expect.Actor == nil {
		return err
	}
	member, err := r.member(ctx, *expect.Actor)
	if err != nil {
		return err
	}
	for _, entry := range entries {
		actor, sequence := entry.GetEvent().GetActor(), entry.GetEvent().GetSequence()
		if err := firstError(
			check(fmt.Sprintf("actor of event %d", sequence), actor.GetMemberId(), member.GetMemberId()),
			check(fmt.Sprintf("actor name of event %d", sequence), actor.GetUser(), member.GetDisplayName()),
		); err != nil {
			return err
		}
	}
	return nil
}

func (r *Runner) standings(ctx context.Context, step *Step) error {
	table, err := r.client(step).GetStandings(ctx, step.Game, step.Season)
	if err != nil {
		return err
	}
	if step.Expect.Game != nil {
		if err := check("standings game", table.GetGame(), *step.Expect.Game); err != nil {
			return err
		}
	}
	if table.GetLag() == nil {
		return fmt.Errorf("the standings say nothing of the projections' lag")
	}
	if uint64(len(table.GetRows())) > table.GetLag().GetProjectedGames()*6 {
		return fmt.Errorf("standings rows: %d rows for %d games", len(table.GetRows()), table.GetLag().GetProjectedGames())
	}
	if err := expectLag(table.GetLag(), step.Expect.Lag); err != nil {
		return err
	}
	for _, wanted := range step.Expect.Rows {
		name := r.named(wanted.Player)
		index := slices.IndexFunc(table.GetRows(), func(row *tablelogv1.StandingRow) bool { return row.GetDisplayName() == name })
		if index < 0 {
			return fmt.Errorf("the standings have no row of %q", name)
		}
		if err := expectStanding(name+"'s", table.GetRows()[index], &wanted); err != nil {
			return err
		}
	}
	return nil
}

func near(label string, actual, expected, within float64) error {
	if !(math.Abs(actual-expected) <= within) {
		return fmt.Errorf("%s: expected %v, got %v", label, expected, actual)
	}
	return nil
}

// expectLag checks the projections' lag within the step's bounds.
func expectLag(lag *tablelogv1.ProjectionLag, bounds *ExpectedLag) error {
	if lag == nil {
		return errors.New("the answer says nothing of the projections' lag")
	}
	if bounds == nil {
		return nil
	}
	if bounds.PendingGamesAtMost != nil && lag.GetPendingGames() > *bounds.PendingGamesAtMost {
		return fmt.Errorf("lag: %d games pending, at most %d", lag.GetPendingGames(), *bounds.PendingGamesAtMost)
	}
	if bounds.SecondsAtMost != nil && lag.GetSeconds() > *bounds.SecondsAtMost {
		return fmt.Errorf("lag: %v s, at most %v s", lag.GetSeconds(), *bounds.SecondsAtMost)
	}
	if lag.GetProjectedGames() < bounds.ProjectedGamesAtLeast {
		return fmt.Errorf("lag: %d games projected, fewer than %d", lag.GetProjectedGames(), bounds.ProjectedGamesAtLeast)
	}
	return nil
}

func expectStanding(label string, row *tablelogv1.StandingRow, expected *ExpectedStanding) error {
	var errs []error
	if expected.Games != nil {
		errs = append(errs, check(label+" games", row.GetGames(), *expected.Games))
	}
	if expected.Wins != nil {
		errs = append(errs, near(label+" wins", row.GetWins(), *expected.Wins, tolerance))
	}
	if expected.Points != nil {
		errs = append(errs, check(label+" points", row.GetPoints(), *expected.Points))
	}
	if expected.AveragePlace != nil {
		errs = append(errs, near(label+" average place", row.GetAveragePlace(), *expected.AveragePlace, tolerance))
	}
	if expected.Rating != nil {
		errs = append(errs, expectRating(label+" rating", row.GetRating(), expected.Rating))
	}
	return firstError(errs...)
}

func expectRating(label string, point *tablelogv1.RatingPoint, expected *ExpectedRating) error {
	var errs []error
	if expected.Mu != nil {
		errs = append(errs, near(label+" mu", point.GetMu(), *expected.Mu, tolerance))
	}
	if expected.Sigma != nil {
		errs = append(errs, near(label+" sigma", point.GetSigma(), *expected.Sigma, tolerance))
	}
	if expected.Ordinal != nil {
		errs = append(errs, near(label+" ordinal", point.GetOrdinal(), *expected.Ordinal, tolerance))
	}
	return firstError(errs...)
}

func (r *Runner) player(ctx context.Context, step *Step) error {
	found, err := r.client(step).PlayerRecord(ctx, r.named(step.Name), step.Game, step.Season)
	if err != nil {
		return err
	}
	expect := &step.Expect
	if err := expectLag(found.GetLag(), expect.Lag); err != nil {
		return err
	}
	if expect.DisplayName != nil {
		if err := check("display name", found.GetPlayer().GetDisplayName(), r.named(*expect.DisplayName)); err != nil {
			return err
		}
	}
	if expect.Games == nil {
		return nil
	}
	kinds, wantedKinds := []string{}, []string{}
	for _, record := range found.GetGames() {
		kinds = append(kinds, record.GetGame())
	}
	for _, wanted := range *expect.Games {
		wantedKinds = append(wantedKinds, wanted.Game)
	}
	if err := check("game types", kinds, wantedKinds); err != nil {
		return err
	}
	for i, record := range found.GetGames() {
		if err := r.expectRecord(record, &(*expect.Games)[i]); err != nil {
			return err
		}
	}
	return nil
}

func (r *Runner) expectRecord(record *tablelogv1.PlayerGameRecord, wanted *ExpectedRecord) error {
	label := record.GetGame() + ":"
	errs := []error{expectStanding(label, record.GetStanding(), &wanted.Standing)}
	if wanted.Places != nil {
		errs = append(errs, check(label+" places", nonNilOf(record.GetPlaces()), nonNilOf(*wanted.Places)))
	}
	if wanted.Scores != nil {
		errs = append(errs, check(label+" scores", nonNilOf(record.GetScores()), nonNilOf(*wanted.Scores)))
	}
	if wanted.History != nil {
		history := record.GetHistory()
		if err := check(label+" rating points", len(history), len(*wanted.History)); err != nil {
			return err
		}
		for i, point := range history {
			expected := &(*wanted.History)[i]
			if expected.GameID != nil {
				errs = append(errs, check(fmt.Sprintf("%s rating %d", label, i), point.GetGameId(), r.named(*expected.GameID)))
			}
			errs = append(errs, expectRating(fmt.Sprintf("%s rating %d", label, i), point, expected))
		}
	}
	if wanted.HeadToHead != nil {
		rows := []ExpectedHeadToHead{}
		for _, h := range record.GetHeadToHead() {
			rows = append(rows, ExpectedHeadToHead{h.GetOpponentName(), h.GetGames(), h.GetAhead(), h.GetLevel(), h.GetBehind()})
		}
		expected := []ExpectedHeadToHead{}
		for _, h := range *wanted.HeadToHead {
			h.Opponent = r.named(h.Opponent)
			expected = append(expected, h)
		}
		errs = append(errs, check(label+" head to head", rows, expected))
	}
	averages := map[string]float64{}
	for _, figure := range record.GetFigures() {
		averages[figure.GetName()] = figure.GetAverage()
	}
	for _, name := range slices.Sorted(maps.Keys(wanted.Figures)) {
		average, ok := averages[name]
		if !ok {
			return fmt.Errorf("%s no statistic %q: %v", label, name, slices.Sorted(maps.Keys(averages)))
		}
		errs = append(errs, near(label+" "+name, average, wanted.Figures[name], tolerance))
	}
	return firstError(errs...)
}

func nonNilOf[T any](values []T) []T {
	if values == nil {
		return []T{}
	}
	return values
}

// seatStats is the games and wins of a seat order (none yet: 0 and 0).
func seatStats(stats *tablelogv1.GetGameTypeStatsResponse, order uint32) (int64, float64) {
	for _, seat := range stats.GetSeats() {
		if seat.GetOrder() == order {
			return int64(seat.GetGames()), seat.GetWins()
		}
	}
	return 0, 0
}

func (r *Runner) gameTypeStats(ctx context.Context, step *Step) error {
	stats, err := r.client(step).GameTypeStats(ctx, step.Game, step.Season)
	if err != nil {
		return err
	}
	r.stats[step.ID] = stats
	expect := &step.Expect
	if expect.Game != nil {
		if err := check("statistics game", stats.GetGame(), *expect.Game); err != nil {
			return err
		}
	}
	if err := expectLag(stats.GetLag(), expect.Lag); err != nil {
		return err
	}
	for _, name := range expect.Figures {
		if !slices.ContainsFunc(stats.GetFigures(), func(f *tablelogv1.FigureAverage) bool { return f.GetName() == name }) {
			return fmt.Errorf("no statistic %q", name)
		}
	}
	added := expect.Added
	if added == nil {
		return nil
	}
	earlier, ok := r.stats[step.Since]
	if !ok {
		return fmt.Errorf("no earlier game_type_stats step %q", step.Since)
	}
	var errs []error
	if added.Games != nil {
		errs = append(errs, check("games added", int64(stats.GetGames())-int64(earlier.GetGames()), *added.Games))
	}
	if added.Moves != nil {
		moves := stats.GetAverageMoves()*float64(stats.GetGames()) - earlier.GetAverageMoves()*float64(earlier.GetGames())
		errs = append(errs, near("moves added", moves, *added.Moves, tolerance*math.Max(1, float64(stats.GetGames()))))
	}
	for _, seat := range added.Seats {
		games, wins := seatStats(stats, seat.Order)
		gamesBefore, winsBefore := seatStats(earlier, seat.Order)
		errs = append(errs,
			check(fmt.Sprintf("seat order %d games added", seat.Order), games-gamesBefore, seat.Games),
			near(fmt.Sprintf("seat order %d wins added", seat.Order), wins-winsBefore, seat.Wins, tolerance))
	}
	return firstError(errs...)
}

func (r *Runner) verify(ctx context.Context, step *Step) error {
	result, err := r.client(step).Verify(ctx, r.gameID)
	if err != nil {
		return err
	}
	ok := true
	if step.Expect.OK != nil {
		ok = *step.Expect.OK
	}
	if result.GetOk() != ok {
		return fmt.Errorf("verify ok: expected %v, got %v (%q at revision %d)", ok, result.GetOk(), result.GetProblem(), result.GetFirstBadRevision())
	}
	if step.Expect.EventsChecked != nil {
		return check("events checked", result.GetEventsChecked(), *step.Expect.EventsChecked)
	}
	return nil
}
