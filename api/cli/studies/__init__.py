"""Study files: named sets of batches, the questions they answer, and the page that answers
them (``playtester study check|run|report``)."""
