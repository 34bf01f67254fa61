package graph

// ActNoteMove records a note moved to another target (a merge moves the merged-away
// identity's notes to the survivor). Added by the store; additive to the action list.
const ActNoteMove = "note.move"
