"""List and download saved LoRA weights (written against the 0.1 RestClient)."""

import pytrio as trio

service = trio.ServiceClient()
rest = service.create_rest_client()

page = rest.list_weights(page=1, page_size=50)  # bug: PTR003
for weight in page["weights"]:
    url = rest.get_archive_url(weight["id"])  # bug: PTR003
    print(weight["name"], url)

print(rest.get_user_info())  # bug: PTR003
