"""What is read of a link's messages: the API's listing and threads, and the creator's
inbox on the dashboard (``service``), their SQL (``repository``), the dashboard's cards and
filters (``schemas``) and the listing endpoints (``router``)."""
