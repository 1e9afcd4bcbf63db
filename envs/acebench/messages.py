"""The scenario tools' return messages in English and Chinese, as ACEBench's two scenario sets word them.

A template is formatted with :meth:`str.format`; :func:`say` picks the language.
"""

from __future__ import annotations

from typing import Any

MESSAGES: dict[str, tuple[str, str]] = {
    # BaseApi
    "wifi_on": ("Wi-Fi has been turned on", "wifi已经打开"),
    "device_logged_in": ("Device has been logged in", "设备已经登录"),
    # MessageApi
    "send_not_logged_in": ("Device not logged in, unable to send message", "device未登录，无法发送短信"),
    "send_no_wifi": ("Wi-Fi is turned off, cannot send messages at this time", "wifi关闭，此时不能发送信息"),
    "inbox_full": (
        "Inbox capacity is full. You need to ask the user which message to delete.",
        "内存容量不够了，你需要询问user删除哪一条短信。",
    ),
    "no_such_users": ("Sender or receiver does not exist", "发送者或接收者不存在"),
    "sent": ("Message successfully sent to {receiver}.", "短信成功发送给{receiver}。"),
    "delete_not_logged_in": ("Device not logged in, unable to delete message", "device未登录，无法删除短信"),
    "no_such_message": ("Message ID does not exist", "短信ID不存在"),
    "deleted": ("Message ID {id} has been successfully deleted.", "短信ID {id} 已成功删除。"),
    "view_not_logged_in": ("Device not logged in, unable to view message information", "device未登录，无法查看短信信息"),
    "no_sender": ("Sender does not exist", "发送者不存在"),
    "no_receiver": ("Receiver does not exist", "接收者不存在"),
    "no_messages_between": ("No related message records found", "没有找到相关的短信记录"),
    "no_user": ("User does not exist", "用户不存在"),
    "no_keyword_messages": ("No messages found containing the keyword", "没有找到包含关键词的短信"),
    "times_not_logged_in": (
        "Device not logged in, unable to retrieve all message times and their corresponding message IDs.",
        "device未登录，获取所有短信的时间以及对应的短信编号。",
    ),
    "latest_not_logged_in": (
        "Device not logged in, unable to retrieve the latest sent message ID.",
        "device未登录，无法获取最新发送的短信ID。",
    ),
    "earliest_not_logged_in": (
        "Device not logged in, unable to retrieve the earliest sent message ID.",
        "device未登录，无法获取最早发送的短信ID",
    ),
    "no_messages": ("No message records found", "短信记录为空"),
    "latest_id": ("The latest message ID is {id}", "最新的短信ID是 {id}"),
    "earliest_id": ("The earliest message ID is {id}", "最早的短信ID是 {id}"),
    # ReminderApi
    "reminder_view_not_logged_in": ("The device is not logged in, so you cannot view notifications", "device未登录，无法查看提醒"),
    "no_reminder_title": ("No reminder found with the title '{title}'.", "没有找到标题为 '{title}' 的提醒"),
    "reminder_add_not_logged_in": ("Device not logged in. Unable to add a new reminder.", "device未登录，无法添加一个新的提醒"),
    "reminders_full": ("Reminder capacity is full. Unable to add a new reminder.", "提醒容量已满，无法添加新的提醒"),
    "reminder_added": ("Reminder '{title}' was successfully added.", "提醒 '{title}' 已成功添加"),
    "reminder_delete_not_logged_in": ("Device not logged in. Unable to delete the specified reminder.", "device未登录，无法删除指定的提醒"),
    "no_such_reminder": ("Reminder ID does not exist.", "提醒ID不存在"),
    "reminder_deleted": ("Reminder ID {id} was successfully deleted.", "提醒ID {id} 已成功删除"),
    "no_reminders": ("No reminders found.", "没有任何提醒"),
    "no_keyword_reminders": ("No reminders found containing the keyword.", "没有找到包含该关键词的提醒"),
    "reminder_notified": ("Reminder ID {id} has been marked as notified.", "提醒ID {id} 已标记为已通知"),
    # FoodPlatform
    "food_no_wifi": ("Wi-Fi is not enabled, unable to login", "wifi未打开，无法登录"),
    "wrong_password": ("Incorrect password", "密码错误"),
    "already_logged_in": ("{user} is already logged in", "{user} 已经登录"),
    "food_logged_in": ("User {user} has successfully logged in!", "用户{user}登陆成功！"),
    "nobody_logged_in": ("No users are currently logged in to the food platform", "当前没有登录food platform"),
    "food_not_logged_in": ("User {user} is not logged in to the food platform", "用户 {user} 未登录food platform"),
    "no_merchant": ("Merchant does not exist", "商家不存在"),
    "bad_quantity": ("Invalid quantity {quantity} for product {product}", "无效的数量 {quantity} 对于商品 {product}"),
    "no_product": ("Product {product} does not exist in {merchant}'s menu", "商品 {product} 不存在于 {merchant} 的菜单中"),
    "insufficient_balance": ("Insufficient balance to place the order", "余额不足，无法下单"),
    "ordered": (
        "Food delivery order successfully placed with {merchant}. Total amount: {total} yuan",
        "外卖订单成功下单给 {merchant}，总金额为 {total} 元",
    ),
    "merchant_missing": ("Merchant '{merchant}' does not exist", "商家 '{merchant}' 不存在"),
    "no_orders": ("User has no order records", "用户没有订单记录"),
    "no_matching_orders": ("No matching orders found", "没有找到匹配的订单"),
    # Travel
    "no_direct_flights": ("There are no direct flights that meet the criteria.", "没有符合条件的直飞航班。"),
    "bad_credentials": ("Incorrect username or password.", "用户名或密码不正确"),
    "need_reservation_or_user": ("Please provide a valid reservation ID or user ID", "请提供有效的预订ID或用户ID"),
    "no_transfer_flights": ("No connecting flights that meet the criteria were found.", "未找到符合条件的中转航班。"),
    "invalid_payment": ("Invalid payment method", "支付方式无效"),
    "balance_short": (
        "Your {method} balance is insufficient. Please consider using another payment method.",
        "{method}余额不足，请考虑换一种支付方式",
    ),
    "booked": (
        "Booking successful. Reservation ID: {id}. Total cost: {total} yuan (including baggage fees).",
        "预订成功，预订号：{id}，总费用：{total}元（包含行李费用）。",
    ),
    "reservation_not_found": ("Reservation not found or user ID does not match.", "预订未找到或用户ID不匹配。"),
    "flight_not_found": ("Flight information not found.", "航班信息未找到。"),
    "flight_changed": ("Flight number has been changed.", "航班号已更改。"),
    "flight_change_failed": (
        "Flight change failed: Invalid new flight number or destination does not match.",
        "航班更改失败：新的航班号无效或目的地不匹配。",
    ),
    "cabin_paid": ("Cabin change successful. Price difference paid: {amount}.", "舱位更改成功。已支付差价: {amount}。"),
    "cabin_unpaid": ("Insufficient balance to pay the cabin price difference.", "余额不足，无法支付舱位差价。"),
    "cabin_refunded": ("Cabin change successful. Price difference refunded: {amount}.", "舱位更改成功。已退款差价: {amount}。"),
    "baggage_paid": ("Baggage has been added. Additional fee to be paid: {amount}.", "行李已增加。需支付额外费用: {amount}。"),
    "baggage_unpaid": ("Insufficient balance to pay the additional baggage fees.", "余额不足，无法支付额外行李费用。"),
    "modified_free": ("Modification completed with no additional fees.", "修改完成，无需额外费用。"),
    "invalid_user": ("Invalid user ID.", "用户ID无效。"),
    "invalid_reservation": ("Invalid reservation ID or it does not belong to the user.", "预订ID无效或与该用户无关。"),
    "invalid_flight": ("Invalid flight information.", "航班信息无效。"),
    "flight_used": ("The flight segment has been used and cannot be canceled.", "航段已使用，无法取消。"),
    "cancel_airline": (
        "The flight has been canceled. Your reservation will be canceled free of charge, and {amount} yuan has been refunded.",
        "航班已取消，您的预订将被免费取消，已退款{amount}元。",
    ),
    "cancel_free": (
        "More than 24 hours before departure. Free cancellation successful, {amount} yuan has been refunded.",
        "距离出发时间超过24小时，免费取消成功，已退款{amount}元。",
    ),
    "cancel_fee": (
        "Less than 24 hours before departure. A cancellation fee of {fee} yuan has been deducted, and {amount} yuan has been refunded.",
        "距离出发时间不足24小时，已扣除取消费{fee}元，退款{amount}元。",
    ),
}


def say(language: str, key: str, **fields: Any) -> str:
    """The message ``key`` in ``language`` (``en`` or ``zh``), formatted with ``fields``."""
    english, chinese = MESSAGES[key]
    return (chinese if language == "zh" else english).format(**fields)
