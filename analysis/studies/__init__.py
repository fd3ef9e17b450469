"""Study files read and checked (``definition``) and the page that answers their questions
from the batches' reports (``page``)."""
