"""Published answers: each answered message's own page ``/{link_id}/a/{answer_id}``."""
