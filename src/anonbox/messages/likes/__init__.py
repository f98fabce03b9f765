"""The creator's likes on their messages: the SQL that flips many at once
(``repository``); the rules and the group commit that batches them are
``messages.service``'s (``like_writer``, ``toggle_like``)."""
