"""A followable link's answers as Notes: every published answer, whether or not anyone
followed when it was given (issue 42)."""
