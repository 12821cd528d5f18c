package tablelog

import (
	"context"
	"fmt"

	tablelogv1 "github.com/tablelog/tablelog/clients/go/gen/tablelog/v1"
)

// AmendKind is what Amend does to the move recorded at a revision.
type AmendKind int

const (
	// Replace puts the new move in its place.
	Replace AmendKind = iota + 1
	// Insert puts the new move before it.
	Insert
	// Delete takes it out of the history.
	Delete
)

// Amendment is a correction of the move recorded at a revision. Replace and Insert take the
// new move as Notation (parsed by the server in the position it goes into) or as a typed Move.
type Amendment struct {
	Kind     AmendKind
	Notation string
	Move     *tablelogv1.Move
	// Seat is, with notation, the seat the recorder says made the new move (nil: whoever is
	// to move there).
	Seat *uint32
	// Reason is why (kept in the event and shown by the audit).
	Reason string
	// DropTail drops a later move that no longer applies, and every move after it, instead of
	// the amendment being refused with AMEND_BREAKS_LATER_MOVE.
	DropTail bool
}

// Amend corrects the move recorded at revision (a move in effect). Refused with
// ReasonAmendBreaksLaterMove, naming the first later move that no longer applies (the
// error's Metadata "revision" and "notation"), unless a.DropTail. w.Seat is not used: the
// new move's seat is a.Seat.
func (c *Client) Amend(ctx context.Context, gameID string, revision uint64, a Amendment, w Write) (*tablelogv1.AmendMoveResponse, error) {
	req := &tablelogv1.AmendMoveRequest{
		GameId: gameID, Revision: revision, ExpectedVersion: w.ExpectedVersion,
		RequestId: requestID(w.RequestID), Reason: a.Reason, DropTail: a.DropTail,
	}
	newMove := &tablelogv1.NewMove{Seat: a.Seat}
	if a.Move != nil {
		newMove.Input = &tablelogv1.NewMove_Move{Move: a.Move}
	} else {
		newMove.Input = &tablelogv1.NewMove_Notation{Notation: a.Notation}
	}
	switch a.Kind {
	case Replace:
		req.Change = &tablelogv1.AmendMoveRequest_ReplaceMove{ReplaceMove: newMove}
	case Insert:
		req.Change = &tablelogv1.AmendMoveRequest_InsertMove{InsertMove: newMove}
	case Delete:
		req.Change = &tablelogv1.AmendMoveRequest_DeleteMove{DeleteMove: &tablelogv1.DeletedMove{}}
	default:
		return nil, fmt.Errorf("tablelog: an amendment is Replace, Insert or Delete, not %d", a.Kind)
	}
	return unary(c, ctx, c.Raw.AmendMove, req)
}
